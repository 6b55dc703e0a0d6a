//go:build !race

package guard_test

// underRace is true when the tests run with the race detector.
const underRace = false
