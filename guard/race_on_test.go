//go:build race

package guard

// raceEnabled is true when the tests run with the race detector.
const raceEnabled = true
