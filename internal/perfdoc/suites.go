package perfdoc

// Suite is one `go test -bench` invocation of the figures run.
type Suite struct {
	Pkg       string // package pattern, relative to the module root
	Bench     string // the -bench regular expression
	Benchtime string // the -benchtime value
}

// Args returns the suite's `go` arguments: no tests, one run of each
// benchmark, allocations reported by the benchmarks themselves.
func (s Suite) Args() []string {
	return []string{"test", "-run", "^$", "-bench", s.Bench, "-benchtime", s.Benchtime, "-count", "1", s.Pkg}
}

// Suites are the benchmarks docs/performance-figures.md shows, sized to
// take about three minutes together on the 2-core development machine:
// the scale scenes of issue 9 (S1, S2, S3; each op is one simulated tick,
// so an Nx benchtime fixes the simulated span), then the ECS history, the
// replay policies and the arena's speed and steady-state tick, lag
// compensation, the wire format and the transports.
var Suites = []Suite{
	{Pkg: "./systems/harness/", Bench: "^BenchmarkCubes(Busy)?$", Benchtime: "3600x"},
	{Pkg: "./systems/harness/", Bench: "^BenchmarkIdle$", Benchtime: "1800x"},
	{Pkg: "./internal/ghostreg/", Bench: "^BenchmarkChangeDetectionAtRest$", Benchtime: "20000x"},
	{Pkg: "./internal/ghostreg/", Bench: "^BenchmarkCatchUpOrder$", Benchtime: "200x"},
	{Pkg: "./internal/ghostreg/", Bench: "^BenchmarkMassJoin$", Benchtime: "3x"},
	{Pkg: "./examples/arena/game/", Bench: "^BenchmarkArenaScale$", Benchtime: "3600x"},
	{Pkg: "./ecs/", Bench: "^(BenchmarkRecordRestore|BenchmarkReplay)$", Benchtime: "2s"},
	{Pkg: "./examples/arena/game/", Bench: "^(BenchmarkReplayPolicies|BenchmarkArena8)$", Benchtime: "3x"},
	{Pkg: "./examples/arena/game/", Bench: "^BenchmarkSteadyStateTick$", Benchtime: "5000x"},
	{Pkg: "./systems/lagcomp/", Bench: "^(BenchmarkRecord|BenchmarkRewoundRay)$", Benchtime: "20000x"},
	{Pkg: "./internal/bitstream/", Bench: "^(BenchmarkBitPack13|BenchmarkCopyBits)$", Benchtime: "20000x"},
	{Pkg: "./internal/protocol/", Bench: "^(BenchmarkSnapshot|BenchmarkRecordRun)$", Benchtime: "20000x"},
	{Pkg: "./internal/control/", Bench: "^(BenchmarkInputBuffer|BenchmarkLeadTracker)$", Benchtime: "200000x"},
	{Pkg: "./internal/ghostreg/", Bench: "^BenchmarkInterpolatorUpdate$", Benchtime: "20000x"},
	{Pkg: "./transport/", Bench: "^BenchmarkSendReceive$", Benchtime: "200000x"},
	{Pkg: "./transport/packet/", Bench: "^(BenchmarkUnreliable|BenchmarkReliable|BenchmarkReliableSmallBatch)$", Benchtime: "50000x"},
	{Pkg: "./transport/udp/", Bench: "^Benchmark(AEAD|Loopback|Server)", Benchtime: "50000x"},
	{Pkg: "./transport/websocket/", Bench: "^BenchmarkRoundTrip$", Benchtime: "2000x"},
}
