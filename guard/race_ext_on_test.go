//go:build race

package guard_test

// underRace is true when the tests run with the race detector: the
// sequential measurements over thousands of planted pages then take longer
// than a test binary may, and .ci/run runs them once more without it.
const underRace = true
