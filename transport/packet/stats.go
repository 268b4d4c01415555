package packet

// Stats counts what happened on one Conn. Counters only grow; the fields
// marked "now" are gauges of the moment Stats was called.
type Stats struct {
	PacketsSent       uint64 // packets handed to the transport, ack-only ones included
	BytesSent         uint64 // bytes of those packets, headers included
	AckOnlySent       uint64 // packets that carried nothing but acks
	PacketsAcked      uint64 // sent packets (not ack-only) the peer acknowledged
	PacketsLost       uint64 // sent packets (not ack-only) judged lost: no ack within 2×RTT+100ms
	DatagramsReceived uint64 // datagrams read from the transport, malformed ones included
	PacketsReceived   uint64 // packets accepted: well formed, new, within every cap
	BytesReceived     uint64 // bytes of the datagrams read from the transport

	Malformed        uint64 // datagrams dropped because they do not decode
	DuplicatePackets uint64 // packets dropped because their sequence was already received
	StalePackets     uint64 // packets dropped because they are older than the 32 acked before the newest

	UnreliableSent      uint64 // unreliable messages accepted by SendUnreliable
	UnreliableDelivered uint64 // unreliable messages returned by Receive
	ReliableQueued      uint64 // reliable messages accepted by SendReliable
	ReliableDelivered   uint64 // reliable messages returned by Receive
	UnorderedQueued     uint64 // reliable unordered messages accepted by SendUnordered
	UnorderedDelivered  uint64 // reliable unordered messages returned by Receive
	ReliableResent      uint64 // reliable messages (either channel) or fragments sent again after no ack came in time
	ReliableDuplicates  uint64 // reliable messages (either channel) or fragments received again and ignored
	FragmentsSent       uint64 // fragments sent, resends included
	FragmentsReceived   uint64 // fragments stored for reassembly

	// Receive-side caps. Each drops the whole packet unacknowledged, so an
	// honest peer resends its content later.
	OutOfWindow      uint64 // a reliable message 256 or more ids ahead of the next one to deliver
	ReceiveBytesFull uint64 // a reliable message would pass Options.MaxReceiveBytes
	FragmentCap      uint64 // a fragment claims more fragments than Options.MaxMessageSize allows
	FragmentRefused  uint64 // a fragment of a message other than the next one missing
	FragmentMismatch uint64 // a fragment's count disagrees with the message being reassembled

	// Send-side caps.
	BudgetRefused  uint64 // SendUnreliable calls refused because the send budget was spent
	BudgetDeferred uint64 // Flush calls that left due reliable data or an ack for later because of the budget
	BacklogRefused uint64 // SendReliable and SendUnordered calls refused by MaxQueuedBytes or MaxReliablePending
	ReliableCapped uint64 // Flush calls that left due reliable data for later because of Options.ReliableBytesPerFlush

	QueuedBytes     int // now: bytes held for (re)sending reliable messages, both channels
	ReliablePending int // now: reliable messages not yet acknowledged, both channels
	HeldBytes       int // now: bytes held by reliable messages waiting for an earlier one or to be read
	ReassemblyBytes int // now: capacity of the reassembly buffer (allocated on the first fragment)
}
