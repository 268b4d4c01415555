//go:build race

package replay

// raceDetector is set when the tests run under the race detector, whose
// instrumentation allocates: allocation counts are checked without it.
const raceDetector = true
