package app

import (
	"github.com/stewardhq/steward/registry"
	"github.com/stewardhq/steward/tool"
)

// buildTools constructs every tool Steward ships.
func (a *App) buildTools() ([]tool.Tool, error) {
	return nil, nil
}

// collections are the declared tool collections.
func (a *App) collections() []registry.Collection {
	return nil
}

// optionSources are the option lists the application maintains.
func optionSources() []string {
	return []string{"FREE_ADDRESS_CHOICE", "SAFE_SEARCH", "WEB_SEARCH_BACKENDS", "WEB_SEARCH_STRATEGY", "LANGUAGES"}
}
