package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/ghostwire/ghostwire/systems/rooms"
	"github.com/ghostwire/ghostwire/transport/udp/tokens"
)

// Sources are what a Collector reads; a nil one is left out.
type Sources struct {
	Rooms  *rooms.Manager
	Tokens *tokens.Service
}

// Collector is a prometheus.Collector of the rooms and the token service.
// Series (all prefixed ghostwire_):
//
//   - room_tick_seconds (histogram, by room): the wall time of a room's
//     updates;
//   - room_ticks_behind (gauge, by room): ticks due and not run;
//   - room_clients (gauge, by room);
//   - room_held (gauge, by room): places held for players whose
//     connection was lost;
//   - room_reconnects_total, room_held_given_up_total (counters, by
//     room): places taken back, and held places given up;
//   - room_cpu_seconds_total, room_bytes_received_total,
//     room_bytes_sent_total, room_dropped_total (counters, by room);
//   - rooms (gauge), rooms_max (gauge), rooms_opened_total,
//     rooms_ended_total, connections_routed_total (counters),
//     connections_refused_total (counter, by reason);
//   - token_requests_total (counter, by result: "issued" or a refusal
//     reason).
type Collector struct {
	src Sources

	tick, behind, clients, cpu, in, out, dropped *prometheus.Desc
	held, reconnects, givenUp                    *prometheus.Desc
	rooms, roomsMax, opened, ended, routed       *prometheus.Desc
	refused, tokenReqs                           *prometheus.Desc
}

// NewCollector returns a Collector of src.
func NewCollector(src Sources) *Collector {
	room := []string{"room"}
	d := func(name, help string, labels []string) *prometheus.Desc {
		return prometheus.NewDesc("ghostwire_"+name, help, labels, nil)
	}
	return &Collector{src: src,
		tick:       d("room_tick_seconds", "Wall time of a room's updates (each runs the ticks due).", room),
		behind:     d("room_ticks_behind", "Ticks a room's clock asked for and it has not run.", room),
		clients:    d("room_clients", "Connections of a room.", room),
		held:       d("room_held", "Places a room holds for players whose connection was lost.", room),
		reconnects: d("room_reconnects_total", "Connections that took a player's place back in a room.", room),
		givenUp:    d("room_held_given_up_total", "Held places a room gave up (grace over, or too many held).", room),
		cpu:        d("room_cpu_seconds_total", "Time a room's goroutine spent in its updates.", room),
		in:         d("room_bytes_received_total", "Datagram bytes a room received.", room),
		out:        d("room_bytes_sent_total", "Datagram bytes a room sent.", room),
		dropped:    d("room_dropped_total", "Connections a room dropped (timeouts, backlogs, refused messages).", room),
		rooms:      d("rooms", "Rooms open.", nil),
		roomsMax:   d("rooms_max", "The most rooms the process opens at once.", nil),
		opened:     d("rooms_opened_total", "Rooms opened.", nil),
		ended:      d("rooms_ended_total", "Rooms ended.", nil),
		routed:     d("connections_routed_total", "Connections routed to a room.", nil),
		refused:    d("connections_refused_total", "Connections routed nowhere, by reason.", []string{"reason"}),
		tokenReqs:  d("token_requests_total", "Token requests, by result: issued, or the refusal's reason.", []string{"result"}),
	}
}

// Describe sends every series' description.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.tick, c.behind, c.clients, c.held, c.reconnects, c.givenUp, c.cpu, c.in, c.out, c.dropped,
		c.rooms, c.roomsMax, c.opened, c.ended, c.routed, c.refused, c.tokenReqs} {
		ch <- d
	}
}

// Collect reads the sources and sends their series.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	if m := c.src.Rooms; m != nil {
		for _, r := range m.Rooms() {
			c.collectRoom(ch, &r)
		}
		st := m.Stats()
		gauge, counter := prometheus.GaugeValue, prometheus.CounterValue
		ch <- prometheus.MustNewConstMetric(c.rooms, gauge, float64(st.Rooms))
		ch <- prometheus.MustNewConstMetric(c.roomsMax, gauge, float64(st.MaxRoom))
		ch <- prometheus.MustNewConstMetric(c.opened, counter, float64(st.Opened))
		ch <- prometheus.MustNewConstMetric(c.ended, counter, float64(st.Ended))
		ch <- prometheus.MustNewConstMetric(c.routed, counter, float64(st.Routed))
		for _, reason := range []string{rooms.RefusedNoClaims, rooms.RefusedUnknownRoom, rooms.RefusedRoomBusy, rooms.RefusedDraining} {
			ch <- prometheus.MustNewConstMetric(c.refused, counter, float64(st.Refused[reason]), reason)
		}
	}
	if t := c.src.Tokens; t != nil {
		st := t.Stats()
		ch <- prometheus.MustNewConstMetric(c.tokenReqs, prometheus.CounterValue, float64(st.Issued), "issued")
		for _, reason := range []string{tokens.RefusedMethod, tokens.RefusedContentType, tokens.RefusedUnauthorized,
			tokens.RefusedTooLarge, tokens.RefusedMalformed, tokens.RefusedUnknownRoom, tokens.RefusedRate, tokens.RefusedNoAddress} {
			ch <- prometheus.MustNewConstMetric(c.tokenReqs, prometheus.CounterValue, float64(st.Refused[reason]), reason)
		}
	}
}

// collectRoom sends one room's series.
func (c *Collector) collectRoom(ch chan<- prometheus.Metric, r *rooms.RoomStats) {
	buckets := make(map[float64]uint64, len(rooms.TickBounds))
	var n uint64
	for i, b := range rooms.TickBounds {
		n += r.Updates[i]
		buckets[b.Seconds()] = n
	}
	n += r.Updates[len(rooms.TickBounds)]
	ch <- prometheus.MustNewConstHistogram(c.tick, n, r.Busy.Seconds(), buckets, r.Name)
	behind := float64(0)
	if r.Expected > r.Ticks {
		behind = float64(r.Expected - r.Ticks)
	}
	gauge, counter := prometheus.GaugeValue, prometheus.CounterValue
	ch <- prometheus.MustNewConstMetric(c.behind, gauge, behind, r.Name)
	ch <- prometheus.MustNewConstMetric(c.clients, gauge, float64(r.Clients), r.Name)
	ch <- prometheus.MustNewConstMetric(c.held, gauge, float64(r.Held), r.Name)
	ch <- prometheus.MustNewConstMetric(c.reconnects, counter, float64(r.Reconnects), r.Name)
	ch <- prometheus.MustNewConstMetric(c.givenUp, counter, float64(r.HeldGivenUp), r.Name)
	ch <- prometheus.MustNewConstMetric(c.cpu, counter, r.Busy.Seconds(), r.Name)
	ch <- prometheus.MustNewConstMetric(c.in, counter, float64(r.BytesIn), r.Name)
	ch <- prometheus.MustNewConstMetric(c.out, counter, float64(r.BytesOut), r.Name)
	ch <- prometheus.MustNewConstMetric(c.dropped, counter, float64(r.Dropped), r.Name)
}
