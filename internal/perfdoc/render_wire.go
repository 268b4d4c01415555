package perfdoc

// wire renders the wire format's benchmarks: bit packing, snapshots, the
// input buffer and the clock's lead tracker, the interpolator and the
// in-memory link, each beside its baseline.
func (p *page) wire() {
	p.printf("## Wire format, inputs, interpolation, the in-memory link\n\n")
	p.printf("Each row's baseline does the same job the plain way on the same values, in the same run.\n\n")
	p.printf("| benchmark | figure | baseline, same run | ratio | allocs/op |\n| --- | ---: | --- | ---: | ---: |\n")
	const bp = "BenchmarkBitPack13"
	p.printf("| `%s` (internal/bitstream): 13-bit values, write + read | %s ns per value | `binary.PutUint16`/`Uint16`: %s ns | %s | %s |\n",
		bp, num(p.get(bp, "ns/value")), num(p.get(bp, "binary-ns/value")), ratio(p.get(bp, "x-binary"), 1), num(p.get(bp, "allocs/op")))
	const cb = "BenchmarkCopyBits"
	p.printf("| `%s` (internal/bitstream): 4 KiB of bits spliced from bit 3 to bit 5 (records copied from a run) | %s ns | one `WriteBits` per byte: %s ns; a plain byte `copy`, unshifted: %s ns | %s; %s of the copy | %s |\n",
		cb, num(p.get(cb, "ns/op")), num(p.get(cb, "naive-ns/op")), num(p.get(cb, "copy-ns/op")), ratio(p.get(cb, "x-naive"), 1), ratio(p.get(cb, "x-copy"), 1), num(p.get(cb, "allocs/op")))
	for _, n := range []string{"16", "64"} {
		s := "BenchmarkSnapshot/ghosts=" + n
		p.printf("| `BenchmarkSnapshot` (internal/protocol): encode + decode, %s ghosts × 2 components, identities known | %s ns per ghost (%s B) | `copy` of the values in and out: %s ns | %s | %s |\n",
			n, num(p.get(s, "ns/ghost")), num(p.get(s, "B/snapshot")), num(p.get(s, "copy-ns/ghost")), ratio(p.get(s, "x-copy"), 1), num(p.get(s, "allocs/op")))
	}
	const rr = "BenchmarkRecordRun"
	p.printf("| `%s` (internal/protocol): a snapshot of 64 delta records copied as one stretch of a record run | %s ns per record | each record's head and body added one at a time: %s ns | %s | %s |\n",
		rr, num(p.get(rr, "ns/record")), num(p.get(rr, "body-ns/record")), ratio(p.get(rr, "x-body"), 1), num(p.get(rr, "allocs/op")))
	for _, r := range []string{"1", "4"} {
		s := "BenchmarkInputBuffer/redundancy=" + r
		p.printf("| `BenchmarkInputBuffer` (internal/control): Add + Take per tick, redundancy %s | %s ns | plain ring writes: %s ns | %s | %s |\n",
			r, num(p.get(s, "ns/tick")), num(p.get(s, "ring-ns/tick")), ratio(p.get(s, "x-ring"), 1), num(p.get(s, "allocs/op")))
	}
	const lt = "BenchmarkLeadTracker"
	lead, scan := p.get(lt, "ns/arrival"), p.get(lt, "scan-ns/arrival")
	p.printf("| `%s` (internal/control): the clock sync's window minimum per arrival | %s ns | a scan of the 60-value window: %s ns | %s | %s |\n",
		lt, num(lead), num(scan), ratio(lead, scan), num(p.get(lt, "allocs/op")))
	const ip = "BenchmarkInterpolatorUpdate"
	p.printf("| `%s` (internal/ghostreg): a frame of 64 moving remote ghosts × 2 components | %s ns per ghost | a plain lerp of the positions: %s ns | %s | %s |\n",
		ip, num(p.get(ip, "ns/ghost")), num(p.get(ip, "lerp-ns/ghost")), ratio(p.get(ip, "x-lerp"), 1), num(p.get(ip, "allocs/op")))
	for _, l := range [][2]string{{"zero", "no conditions"}, {"conditioned", "20 ms ±5 ms, 1 % loss, duplication and reordering"}} {
		s := "BenchmarkSendReceive/" + l[0]
		p.printf("| `BenchmarkSendReceive` (transport): a 100-byte datagram through the memory link, %s | %s ns per packet | `copy` into a ring of buffers: %s ns | %s | %s |\n",
			l[1], num(p.get(s, "ns/packet")), num(p.get(s, "copy-ns/packet")), ratio(p.get(s, "x-copy"), 1), num(p.get(s, "allocs/op")))
	}
	p.printf("\n")
}

// transports renders the packet layer, the UDP transport and the
// WebSocket transport, each beside the bare path under it.
func (p *page) transports() {
	p.printf("## Transports: the packet layer, netcode 1.02 over UDP, WebSocket\n\n")
	p.printf("Loopback figures depend on the kernel and the machine's load more than any other on this page; compare each with its baseline.\n\n")
	p.printf("| benchmark | figure | baseline, same run | ratio | bytes added | allocs/op |\n| --- | ---: | --- | ---: | ---: | ---: |\n")
	const u, r, sb = "BenchmarkUnreliable", "BenchmarkReliable", "BenchmarkReliableSmallBatch"
	p.printf("| `%s` (transport/packet): 1,000 B sent, received and acknowledged | %s ns per packet | a bare memory-link round trip: %s ns | %s | %s per message | %s |\n",
		u, num(p.get(u, "ns/packet")), num(p.get(u, "bare-rt-ns/exchange")), ratio(p.get(u, "x-bare-rt"), 1), num(p.get(u, "overhead-bytes/msg")), num(p.get(u, "allocs/op")))
	p.printf("| `%s` (transport/packet): 1,000 B, reliable | %s ns per message | a bare round trip: %s ns | %s | %s per message | %s |\n",
		r, num(p.get(r, "ns/msg")), num(p.get(r, "bare-rt-ns/exchange")), ratio(p.get(r, "x-bare-rt"), 1), num(p.get(r, "overhead-bytes/msg")), num(p.get(r, "allocs/op")))
	p.printf("| `%s` (transport/packet): 16 reliable messages of 40 B per packet | %s ns per message | — | — | %s per message | %s |\n",
		sb, num(p.get(sb, "ns/msg")), num(p.get(sb, "overhead-bytes/msg")), num(p.get(sb, "allocs/op")))
	const aead, bare, full = "BenchmarkAEADSealOpen1200", "BenchmarkLoopbackBare1200", "BenchmarkLoopbackPacket1200"
	sealed, naked := p.get(full, "ns/packet"), p.get(bare, "ns/packet")
	p.printf("| `%s` (transport/udp): 1,200 B sealed, sent, received and opened over loopback (netcode 1.02) | %s ns per packet | the bare loopback send and receive: %s ns; the bare AEAD seal and open (`%s`): %s ns | %s | — | %s |\n",
		full, num(sealed), num(naked), aead, num(p.get(aead, "ns/packet")), ratio(sealed, naked), num(p.get(full, "allocs/op")))
	for _, b := range [][2]string{
		{"BenchmarkServerReceive64", "server CPU per received packet, 64 connections"},
		{"BenchmarkServerSend64", "server CPU per sent packet, 64 connections, the write discarded"},
		{"BenchmarkServerSendSocket64", "server sent packet through a real socket, 64 connections, a system call each"},
		{"BenchmarkServerSendBatched64", "the same, batched (`SendBatch` 64, one `sendmmsg` a round of 64)"},
	} {
		p.printf("| `%s` (transport/udp): %s | %s ns (%s packets/s per core) | — | — | — | %s |\n",
			b[0], b[1], num(p.get(b[0], "ns/packet")), num(p.get(b[0], "packets/s/core")), num(p.get(b[0], "allocs/op")))
	}
	const ws = "BenchmarkRoundTrip"
	p.printf("| `%s` (transport/websocket): 1,000 B to an echo peer and back over loopback, median (p99) | %s µs (%s µs) | the bare WebSocket library, blocking calls: %s µs (%s µs); the memory link: %s µs | %s | — | %s |\n\n",
		ws, num(p.get(ws, "p50-µs")), num(p.get(ws, "p99-µs")), num(p.get(ws, "bare-p50-µs")), num(p.get(ws, "bare-p99-µs")),
		num(p.get(ws, "memory-ns/roundtrip")/1e3), ratio(p.get(ws, "p50-x-bare"), 1), num(p.get(ws, "allocs/op")))
}

// lagcomp renders recording and a rewound ray query beside their
// baselines.
func (p *page) lagcomp() {
	const rec, ray = "BenchmarkRecord", "BenchmarkRewoundRay"
	p.printf("## Lag compensation\n\n")
	p.printf("`%s` and `%s` (systems/lagcomp): 64 players with 1,000 hitboxes between them (spheres, capsules and boxes), recorded for a full window. A shot tests its ray against each player's recorded poses before rewinding it, so it rewinds only the players near its line, nearest first, and stops at the first visible hit.\n\n", rec, ray)
	p.printf("| benchmark | figure | baseline, same run | ratio | allocs/op |\n| --- | ---: | --- | ---: | ---: |\n")
	perEntity, xCopy := p.get(rec, "ns/entity"), p.get(rec, "x-copy")
	copyNs := 0.0
	if xCopy > 0 {
		copyNs = perEntity / xCopy
	}
	p.printf("| record one tick (position, facing, 16 hitboxes), each player posed for the shots' test | %s ns per player | `copy` of the same bytes: %s ns | %s | %s |\n",
		num(perEntity), num(copyNs), ratio(xCopy, 1), num(p.get(rec, "allocs/op")))
	q := p.get(ray, "ns/query")
	p.printf("| one rewound ray query (64 players at tick 25.5, 1,000 hitboxes, the walls) | **%s µs** | the same query rewinding every player: %s µs | %s | %s |\n",
		num(q/1e3), num(p.get(ray, "every-ns/query")/1e3), ratio(p.get(ray, "x-every"), 1), num(p.get(ray, "allocs/op")))
	p.printf("| the same | %s µs | the same query against the present (no blending): %s µs | %s | — |\n\n",
		num(q/1e3), num(p.get(ray, "present-ns/query")/1e3), ratio(p.get(ray, "x-present"), 1))
}
