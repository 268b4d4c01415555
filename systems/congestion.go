package systems

import "time"

// CongestionOptions says how each connection's snapshot budget follows
// its link (ServerOptions.Congestion). The zero value is the adaptive
// budget with its default floor.
//
// The budget is a rate in bytes per second that every snapshot packet of
// the connection, its 12 bytes of packet layer included, draws from. It
// starts at its maximum (ServerOptions.BytesPerSecond, or one packet of
// SnapshotBytes per send without it). About once a round trip it is
// judged against what the packet layer measured since the last
// judgement (the loss over the last 64 packets judged at least): when
// the connection sent at least half its budget since, and the round trip
// has grown past the least one seen (over 30 s) by more than a quarter of
// it, at least 40 ms and at least 6 mean deviations of the round trip (a
// queue builds up on the way, not jitter), or more than 20 % of the
// packets sent were lost, it is cut, by the least round trip over the
// present one (at least by 15 %, at most by half), once a round trip;
// when the queue is gone (less than half that) and under 2 % were lost,
// it grows by 8 % (at least 2 % of its maximum) each judgement, back to
// its maximum. A connection that sends less than half its budget is
// never cut (its own traffic is not what the link queues), nor is one
// that loses less than 20 % at random. It never goes below the floor,
// which keeps a first packet of at least 128 bytes each send (the
// connection's own ghosts, spawns and acknowledgements).
type CongestionOptions struct {
	// Off keeps every connection's budget at its maximum, as a static
	// token bucket.
	Off bool
	// Floor is the least budget, in bytes per second; when zero, a
	// 128-byte packet (or one of SnapshotBytes if smaller) and its packet
	// layer each send: 8,400 at 60 snapshots a second. Allowed: 0 or
	// 1,000..100,000,000; a floor above the maximum is the maximum.
	Floor int
}

// Congestion control's constants (see CongestionOptions).
const (
	congestionMinQueue  = 40 * time.Millisecond // the least queueing delay judged a queue
	congestionLoss      = 0.20                  // the share of packets lost that cuts the budget whatever the delay
	congestionClean     = 0.02                  // the most lost for the budget to grow
	congestionGrowth    = 0.08                  // the budget's growth per clean judgement
	congestionStep      = 0.02                  // its least growth, as a share of the maximum
	congestionMinCut    = 0.5                   // the budget's deepest cut at once
	congestionMaxCut    = 0.85                  // its shallowest
	congestionInterval  = 50 * time.Millisecond // the least time between two judgements
	congestionMinWindow = 30 * time.Second      // how long the least round trip seen holds
	congestionJitter    = 6                     // the queue judged, in mean deviations of the round trip
	congestionUsed      = 0.5                   // the least share of its budget a connection sends to be judged
	congestionSamples   = 64                    // the fewest packets judged that give a loss share (the judgements gather them)
)

// linkBudget is one connection's adaptive snapshot budget.
type linkBudget struct {
	rate        float64       // bytes per second now; 0 before the first update
	minRTT      time.Duration // the least round trip seen within congestionMinWindow
	minAt       time.Duration // when minRTT was seen
	next        time.Duration // when the next judgement is due
	cutAt       time.Duration // the last cut
	acked, lost uint64        // the packet layer's counters at the last judgement
	cuts        uint64        // the cuts so far
	// sent counts the snapshot bytes sent (packet layer included),
	// sentThen at the last judgement, judged its time: a connection that
	// sent under half its budget since is not judged by its link (its
	// own traffic is not what queues).
	sent, sentThen uint64
	judged         time.Duration
	// avg and dev are the round trip's mean and mean deviation over the
	// judgements (1/8 and 1/8 a judgement): a link whose round trip
	// jitters needs a longer one to read as a queue.
	avg, dev time.Duration
}

// update judges the link at now from its smoothed round trip rtt and the
// packet layer's counts of packets acknowledged and lost, when a
// judgement is due, and returns the budget in bytes per second, within
// floor..top.
func (b *linkBudget) update(now, rtt time.Duration, acked, lost uint64, floor, top float64) float64 {
	floor = min(floor, top)
	if b.rate == 0 {
		b.rate, b.next, b.acked, b.lost, b.judged = top, now, acked, lost, now
	}
	if rtt > 0 && (b.minRTT == 0 || rtt <= b.minRTT || now-b.minAt > congestionMinWindow) {
		b.minRTT, b.minAt = rtt, now
	}
	if now < b.next || rtt <= 0 {
		return min(max(b.rate, floor), top)
	}
	b.next = now + max(rtt, congestionInterval)
	limited := float64(b.sent-b.sentThen) < congestionUsed*b.rate*(now-b.judged).Seconds()
	b.sentThen, b.judged = b.sent, now
	loss := 0.0
	if da, dl := acked-b.acked, lost-b.lost; da+dl >= congestionSamples {
		loss = float64(dl) / float64(da+dl)
		b.acked, b.lost = acked, lost
	}
	if b.avg == 0 {
		b.avg = rtt
	}
	queue := max(congestionMinQueue, b.minRTT/4, congestionJitter*b.dev)
	if rtt-b.minRTT <= queue { // jitter, not a queue building up: it widens the next judgements' margin
		d := rtt - b.avg
		b.avg += d / 8
		b.dev += (max(d, -d) - b.dev) / 8
	}
	switch {
	case limited:
		// Its own traffic is not what the link queues or loses: held
		// where it is, or grown back.
		if rtt-b.minRTT < queue/2 {
			b.rate += max(b.rate*congestionGrowth, top*congestionStep)
		}
	case rtt-b.minRTT > queue || loss > congestionLoss:
		if now-b.cutAt >= rtt {
			cut := min(max(float64(b.minRTT)/float64(rtt), congestionMinCut), congestionMaxCut)
			b.rate *= cut
			b.cutAt = now
			b.cuts++
		}
	case rtt-b.minRTT < queue/2 && loss < congestionClean:
		b.rate += max(b.rate*congestionGrowth, top*congestionStep)
	}
	b.rate = min(max(b.rate, floor), top)
	return b.rate
}
