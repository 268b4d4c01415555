//go:build race

package udp

// raceDetector is set under the race detector, whose instrumentation of
// the poller's raw reads allocates: allocation counts are checked
// without it.
const raceDetector = true
