// Package fuzzing holds what every package with fuzz targets sets up in its
// TestMain, so that `go test -fuzz` spends its time fuzzing.
//
// Go's fuzzer minimizes every input that widens coverage before it goes on,
// for up to -fuzzminimizetime (60 s by default), and the executions it
// spends doing so are not counted. Its minimizer tries removing every run
// of bytes of a []byte argument, O(n²) executions for n bytes: about 580,000
// for a 1,078-byte connection request, two million for a 2,048-byte connect
// token, and still as many when the format has a fixed size and no removal
// can succeed. So a target whose inputs are packets or tokens spent whole
// fuzzing rounds minimizing its first new input: FuzzParseConnectToken ran
// 495 inputs in 25 s, FuzzRequest 1,196 in 10 s and then none.
// [BoundMinimizing] caps minimizing at [MinimizeLimit] executions, a tenth
// of a second or so, unless the command line asks for more.
package fuzzing

import "flag"

// MinimizeLimit is the -fuzzminimizetime that [BoundMinimizing] sets: this
// many executions per minimized input. It cuts a long input's tail and
// drops single bytes; to minimize a failing input further, rerun it with
// -fuzzminimizetime=60s.
const MinimizeLimit = "1000x"

// minimizeFlag is the testing package's flag behind go test's
// -fuzzminimizetime.
const minimizeFlag = "test.fuzzminimizetime"

// BoundMinimizing sets -test.fuzzminimizetime to [MinimizeLimit] unless the
// command line set it. Call it first in TestMain, before m.Run: it parses
// the command line (m.Run parses it only if no one has).
func BoundMinimizing() {
	if !flag.Parsed() {
		flag.Parse()
	}
	f := flag.Lookup(minimizeFlag)
	if f == nil {
		return // not a test binary
	}
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == minimizeFlag })
	if !set {
		if err := f.Value.Set(MinimizeLimit); err != nil {
			panic("fuzzing: " + minimizeFlag + " refused " + MinimizeLimit + ": " + err.Error())
		}
	}
}
