package transport

// What the external tests of this package reach that games do not.
var (
	ErrInvalidConfig = errInvalidConfig
	ErrInvalidAddr   = errInvalidAddr
	ErrAddrInUse     = errAddrInUse
	ErrNoListener    = errNoListener
)

const (
	MaxLinkDelay       = maxLinkDelay
	DefaultMaxInFlight = defaultMaxInFlight
)

// NewMemoryNetworkWithMaxInFlight is NewMemoryNetwork with the in-flight
// bound of each direction set to n.
func NewMemoryNetworkWithMaxInFlight(clock Clock, seed uint64, n int) *MemoryNetwork {
	return newMemoryNetwork(clock, seed, memoryOptions{maxInFlight: n})
}

// ValidateLink is LinkConfig's validation, naming fields LinkConfig.X.
func ValidateLink(c LinkConfig) error { return c.validate("LinkConfig") }

// ValidateConditions is Conditions' validation.
func ValidateConditions(c Conditions) error { return c.validate() }
