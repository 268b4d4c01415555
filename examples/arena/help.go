package main

import (
	"flag"
	"fmt"
	"io"
	"strings"
)

// helpModes is the head of -h: every mode, and how to ask for it.
const helpModes = `arena: ghostwire's example game, a shoot-out in a walled square, in one of six modes.

  arena [flags]                                 headless match: bots and a server over simulated links,
                                                on virtual time, as fast as the machine allows
  arena -serve ADDR -key FILE [flags]           network server, in real time over UDP (netcode 1.02):
                                                -rooms matches behind one port, drained on SIGTERM
  arena -serve ADDR -key FILE -agones [flags]   the same as an Agones game server (a fleet member)
  arena -connect ADDR -key FILE [flags]         network client: bots, each on its own UDP connection
  arena -connect ADDR -tokens URL [flags]       the same, with connect tokens from a token endpoint
  arena -genkey FILE                            write a new private key for -serve and -connect, and exit
  arena -web ADDR [flags]                       web: play in a browser against bots, in real time
  arena -replay FILE [-report FILE]             replay a recorded match (-record) with no network, checking
                                                every state hash (docs/replays.md)
  arena -replay FILE -web ADDR                  the same, served to a browser: timeline, kills, disputed shots
                                                and their kill-cams

Every mode but -genkey ends cleanly on SIGINT (Ctrl-C) or SIGTERM, with its summary and -report.
A bad value is refused with the flag's name and its allowed range.
`

// helpGroup is one section of -h: the flags of one mode, read from the flag
// set that parses them, so the defaults shown are the defaults used.
type helpGroup struct {
	title   string
	network bool // the flags are the network modes' (networkFlags), else the headless match's and -web's
	flags   []helpFlag
}

// helpFlag is one flag of a section. usage and def, when set, replace the
// flag's own where the mode gives it another meaning or default.
type helpFlag struct {
	name, arg  string
	usage, def string
}

var helpGroups = []helpGroup{
	{title: "Headless match (the default mode)", flags: []helpFlag{
		{name: "clients", arg: "N"},
		{name: "duration", arg: "D"},
		{name: "tick-rate", arg: "HZ"},
		{name: "rtt", arg: "D"},
		{name: "jitter", arg: "D"},
		{name: "loss", arg: "PCT"},
		{name: "dup", arg: "PCT"},
		{name: "reorder", arg: "PCT"},
		{name: "seed", arg: "N"},
		{name: "rollback", arg: "mismatch|always"},
		{name: "lagcomp", arg: "on|off"},
		{name: "max-rewind", arg: "D"},
		{name: "interp-delay", arg: "D"},
		{name: "input-delay", arg: "N|auto"},
		{name: "cheaters", arg: "N"},
		{name: "cheat", arg: "KIND"},
		{name: "crates", arg: "N"},
		{name: "view-radius", arg: "R"},
		{name: "bot-aim", arg: "perfect|human"},
		{name: "ball", arg: "on|off"},
		{name: "rockets", arg: "on|off"},
		{name: "chat", arg: "on|off"},
		{name: "record", arg: "FILE"},
	}},
	{title: "Replay (-replay; see docs/replays.md)", flags: []helpFlag{
		{name: "replay", arg: "FILE"},
	}},
	{title: "Network server (-serve; see docs/network.md)", network: true, flags: []helpFlag{
		{name: "serve", arg: "ADDR"},
		{name: "public", arg: "ADDR"},
		{name: "key", arg: "FILE", usage: "the 32-byte private key connect tokens are made with (required; make one with -genkey)"},
		{name: "tokens", arg: "ADDR", usage: "also serve connect tokens over HTTP on this address (host:port), as a matchmaker would: POST JSON with -token-secret's secret"},
		{name: "token-secret", arg: "FILE", usage: "the token endpoint's shared secret (required with -tokens; make one with: head -c 24 /dev/urandom | base64 > FILE)"},
		{name: "max-clients", arg: "N"},
		{name: "rooms", arg: "N"},
		{name: "metrics", arg: "ADDR"},
		{name: "agones"},
		{name: "grace", arg: "D"},
		{name: "record", arg: "FILE"},
		{name: "duration", arg: "D", usage: "how long to serve before the drain (0..24h; 0: until SIGINT or SIGTERM)"},
		{name: "tick-rate", arg: "HZ"},
		{name: "lagcomp", arg: "on|off"},
		{name: "max-rewind", arg: "D"},
		{name: "interp-delay", arg: "D", usage: "the longest fixed interpolation delay a client's shots are judged with (0 = the adaptive delay's, up to 1s)"},
		{name: "genkey", arg: "FILE"},
	}},
	{title: "Network client (-connect; see docs/network.md)", network: true, flags: []helpFlag{
		{name: "connect", arg: "ADDR"},
		{name: "key", arg: "FILE", usage: "the server's private key, to make connect tokens here (or give -tokens)"},
		{name: "tokens", arg: "URL", usage: "fetch connect tokens from this token endpoint instead of making them with -key"},
		{name: "token-secret", arg: "FILE", usage: "the token endpoint's shared secret (required with -tokens)"},
		{name: "room", arg: "NAME"},
		{name: "clients", arg: "N"},
		{name: "duration", arg: "D", usage: "play before the bots stand still and leave (1s..2h)", def: "30s"},
		{name: "tick-rate", arg: "HZ"},
		{name: "seed", arg: "N"},
		{name: "rollback", arg: "mismatch|always"},
		{name: "interp-delay", arg: "D"},
		{name: "input-delay", arg: "N|auto", usage: "ticks each client's input waits before it applies, or auto (adaptive, 0..4)"},
		{name: "bot-aim", arg: "perfect|human"},
	}},
	{title: "Web (-web; the page's client is built with your Go toolchain at start)", flags: []helpFlag{
		{name: "web", arg: "ADDR", usage: "serve the arena at this address (host:port) to play in a browser against -clients bots, in real time: " +
			"WASD or arrows move, the mouse aims, a click fires the gun, a right-click or E fires a rocket, Enter opens the chat and sends a line"},
		{name: "clients", arg: "N", usage: "number of bots to play against (0..32)"},
		{name: "seed", arg: "N", usage: "seed of the bots and of the links' conditions"},
		{name: "bot-aim", arg: "perfect|human", usage: "how the bots aim: human (a reaction time, misses: a person can win) or perfect", def: "human"},
		{name: "chat", arg: "on|off", usage: "the bots say a line of chat now and then, shown on the page beside yours"},
		{name: "web-settings", usage: "let pages switch the server's own settings (lag compensation, for every player); off, the page shows them read-only"},
		{name: "web-transport", arg: "auto|webtransport|websocket", usage: "the page's transport: auto tries WebTransport (UDP, the same port) and falls back to WebSocket; a page's ?transport= overrides it", def: "auto"},
		{name: "web-cert", arg: "FILE", usage: "WebTransport's certificate (PEM), for production; without it a 13-day development certificate that the page trusts by its hash"},
		{name: "web-key", arg: "FILE", usage: "the private key (PEM) of -web-cert"},
	}},
	{title: "Report and output (headless match, -serve, -connect)", flags: []helpFlag{
		{name: "report", arg: "FILE"},
		{name: "quiet"},
	}},
}

// printHelp writes -h: the modes, then each mode's flags with their
// defaults and allowed ranges.
func printHelp(w io.Writer) error {
	headless := headlessFlags(&headlessArgs{})
	network := networkFlags(&networkArgs{})
	var b strings.Builder
	b.WriteString(helpModes)
	for _, g := range helpGroups {
		fs := headless
		if g.network {
			fs = network
		}
		fmt.Fprintf(&b, "\n%s:\n", g.title)
		for _, hf := range g.flags {
			f := fs.Lookup(hf.name)
			if f == nil {
				return fmt.Errorf("help: no flag -%s", hf.name) // a test keeps the table true to the flag sets
			}
			b.WriteString(helpLine(f, hf))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// helpLine formats one flag: its name and argument, then its usage and
// default on an indented line.
func helpLine(f *flag.Flag, hf helpFlag) string {
	usage, def := f.Usage, f.DefValue
	if hf.usage != "" {
		usage = hf.usage
	}
	if hf.def != "" {
		def = hf.def
	}
	head := "  -" + f.Name
	if hf.arg != "" {
		head += " " + hf.arg
	}
	if def != "" && def != "false" {
		usage += " (default " + def + ")"
	}
	return head + "\n    \t" + usage + "\n"
}
