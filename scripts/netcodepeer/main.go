// Command netcodepeer is ghostwire's side of the comparison with the
// netcode C reference (scripts/udp-vs-netcode-c): the reference's own
// server.c and client.c programs, written with transport/udp. Each side
// sends one 1,200-byte payload (byte i = i & 0xFF) per 60 Hz tick,
// checks every payload it receives, sleeps a tick between updates as the
// reference does, and on SIGINT prints one JSON line: packets sent and
// received, bad payloads, and its own CPU time (getrusage). With
// -clients N one client process runs N clients, and with -all the server
// sends to every client: the scale case, where the server's batched
// reading and writing count.
//
//	go run ./scripts/netcodepeer -role server -addr 127.0.0.1:40000
//	go run ./scripts/netcodepeer -role client -addr 127.0.0.1:40000
//
// The key and protocol ID are the reference's, so either side also talks
// to the C one.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"net/netip"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/ghostwire/ghostwire/transport"
	"github.com/ghostwire/ghostwire/transport/udp"
)

// The reference's test key and protocol ID (server.c, client.c).
var privateKey = [udp.KeySize]byte{0x60, 0x6a, 0xbe, 0x6e, 0xc9, 0x19, 0x10, 0xea,
	0x9a, 0x65, 0x62, 0xf6, 0x6f, 0x2b, 0x30, 0xe4,
	0x43, 0x71, 0xd6, 0x2c, 0xd1, 0x99, 0x27, 0x26,
	0x6b, 0x3c, 0x60, 0xf4, 0xb7, 0x15, 0xab, 0xa1}

const protocolID = 0x1122334455667788

// result is what a side prints when it stops.
type result struct {
	Role     string  `json:"role"`
	Sent     uint64  `json:"sent"`
	Received uint64  `json:"received"`
	Bad      uint64  `json:"bad"`
	CPUs     float64 `json:"cpu_s"`
	Wall     float64 `json:"wall_s"`
	Writes   uint64  `json:"writes,omitempty"`
}

func main() {
	role := flag.String("role", "server", "server or client")
	addr := flag.String("addr", "127.0.0.1:40000", "the server's address")
	batch := flag.Int("send-batch", udp.MaxSendBatch, "the server's udp.Options.SendBatch")
	polled := flag.Bool("polled", true, "read the sockets in Poll (udp.Options.Polled), not on goroutines")
	n := flag.Int("clients", 1, "the clients one client process runs")
	all := flag.Bool("all", false, "the server sends to every client, not only the first (as server.c does)")
	flag.Parse()
	ap, err := netip.ParseAddrPort(*addr)
	if err != nil {
		log.Fatalf("-addr %q: %v", *addr, err)
	}
	payload := make([]byte, transport.MaxDatagramSize)
	for i := range payload {
		payload[i] = byte(i)
	}
	quit := make(chan os.Signal, 1)
	signal.Notify(quit, syscall.SIGINT)
	r := result{Role: *role}
	start := time.Now()
	buf := make([]byte, transport.MaxDatagramSize)
	receive := func(c transport.Conn) {
		for {
			n, ok := c.Receive(buf)
			if !ok {
				return
			}
			r.Received++
			if !bytes.Equal(buf[:n], payload) {
				r.Bad++
			}
		}
	}
	const tick = time.Second / 60
	switch *role {
	case "server":
		l, err := udp.Listen(udp.Options{BindAddress: *addr, PrivateKey: privateKey, ProtocolID: protocolID, SendBatch: *batch, Polled: *polled})
		if err != nil {
			log.Fatal(err)
		}
		defer l.Close()
		var conns []transport.Conn
		for !stopped(quit) {
			l.Poll()
			for c, ok := l.Accept(); ok; c, ok = l.Accept() {
				conns = append(conns, c)
			}
			for i, c := range conns {
				if (i == 0 || *all) && c.Send(payload) == nil {
					r.Sent++
				}
			}
			for _, c := range conns {
				receive(c)
			}
			l.Flush()
			sleep(tick)
		}
		r.Writes = l.Stats().Writes
	case "client":
		now := time.Now()
		clients := make([]*udp.Client, *n)
		for i := range clients {
			token, _, err := udp.MakeConnectToken(udp.TokenParams{PrivateKey: privateKey, ProtocolID: protocolID, ClientID: uint64(now.UnixNano()) + uint64(i),
				ServerAddresses: []netip.AddrPort{ap}, Create: now, Expire: now.Add(45 * time.Second), TimeoutSeconds: 5})
			if err != nil {
				log.Fatal(err)
			}
			if clients[i], err = udp.Dial(token, udp.ClientOptions{Polled: *polled}); err != nil {
				log.Fatal(err)
			}
			defer clients[i].Close()
		}
		for !stopped(quit) {
			for _, c := range clients {
				c.Poll()
				if c.State() == udp.StateConnected && c.Send(payload) == nil {
					r.Sent++
				}
				receive(c)
			}
			sleep(tick)
		}
	default:
		log.Fatalf("-role %q: server or client", *role)
	}
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	r.CPUs = time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
	r.Wall = time.Since(start).Seconds()
	out, _ := json.Marshal(r)
	fmt.Println(string(out))
}

// stopped reports whether SIGINT arrived.
func stopped(quit chan os.Signal) bool {
	select {
	case <-quit:
		return true
	default:
		return false
	}
}

// sleep blocks the thread for d in the kernel, as the reference's
// netcode_sleep does: with 64 clients a time.Sleep costs the server
// process about a fifth more CPU (twice the thread switches).
func sleep(d time.Duration) {
	ts := syscall.NsecToTimespec(int64(d))
	_ = syscall.Nanosleep(&ts, nil)
}
