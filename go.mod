module github.com/stewardhq/steward

go 1.26
