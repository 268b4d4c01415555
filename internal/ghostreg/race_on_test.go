//go:build race

package ghostreg_test

// raceDetector is set when the tests run under the race detector, which
// makes them about 20 times slower: the longest ones shorten their
// simulated time there (the plain run keeps the full length).
const raceDetector = true
