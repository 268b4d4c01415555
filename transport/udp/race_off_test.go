//go:build !race

package udp

// raceDetector is set under the race detector (see race_on_test.go).
const raceDetector = false
