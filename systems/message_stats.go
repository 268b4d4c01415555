package systems

// MessageStats counts the game's messages (docs/messages.md) one end sent
// and received: ServerStats.Messages over every connection, closed ones
// included, ConnStats.Messages for one, ClientStats.Messages for a client.
type MessageStats struct {
	// Sent counts the messages queued for sending; one to n connections
	// counts n.
	Sent uint64
	// Received counts the messages accepted and handed to the handlers
	// (Handle); Unhandled those of them of a type without a handler.
	Received, Unhandled uint64
	// Suppressed counts sends made during a replay (a rollback's, or the
	// determinism check's): dropped without an error, as the tick's first
	// run sent them.
	Suppressed uint64
	// RateLimited counts a client's sends refused with ErrMessageRate.
	RateLimited uint64
	// Stale counts the unreliable sequenced messages dropped for arriving
	// after a newer one of their type from the same sender.
	Stale uint64
	// Refused counts the messages refused on arrival, by reason: none of
	// them reached a handler.
	Refused MessageRefusals
}

// MessageRefusals counts the messages a receiver refused, by reason. A
// server refuses for every reason; a client, which trusts the server's
// rate, for the first three.
type MessageRefusals struct {
	// Unknown: a type ID the schema lacks, or a type that does not travel
	// this way (netsync.MessageRules.Direction).
	Unknown uint64
	// Malformed: fields that do not decode (a value out of its range,
	// text that is not valid UTF-8), bytes after them, a short header, or
	// a type on another channel than its rules say.
	Malformed uint64
	// Oversized: fields longer than the type's MaxBytes.
	Oversized uint64
	// OverRate: beyond the type's rate limit for the connection
	// (PerSecond and Burst, with a second of slack for the network; see
	// docs/messages.md).
	OverRate uint64
}

// Total returns the refusals of every reason.
func (r MessageRefusals) Total() uint64 { return r.Unknown + r.Malformed + r.Oversized + r.OverRate }

// add adds o's counters to s.
func (s *MessageStats) add(o *MessageStats) {
	s.Sent += o.Sent
	s.Received += o.Received
	s.Unhandled += o.Unhandled
	s.Suppressed += o.Suppressed
	s.RateLimited += o.RateLimited
	s.Stale += o.Stale
	s.Refused.Unknown += o.Refused.Unknown
	s.Refused.Malformed += o.Refused.Malformed
	s.Refused.Oversized += o.Refused.Oversized
	s.Refused.OverRate += o.Refused.OverRate
}
