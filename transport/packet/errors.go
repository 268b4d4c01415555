package packet

import (
	"errors"
	"strconv"
)

var (
	// ErrMessageSize is matched (errors.Is) by the error SendUnreliable
	// returns for a message longer than MaxUnreliableSize and SendReliable
	// for one longer than Options.MaxMessageSize.
	ErrMessageSize = errors.New("packet: message too large")

	// ErrBacklogged is matched by the error SendReliable returns when the
	// send queue is full, and by Backlogged's report of a full or stalled
	// queue. A server disconnects such a peer.
	ErrBacklogged = errors.New("packet: reliable send queue backlogged")

	// ErrOverBudget is matched by the error SendUnreliable returns while the
	// send budget is spent.
	ErrOverBudget = errors.New("packet: send budget spent")
)

// sizeError names the message size and the limit it passed.
type sizeError struct {
	channel string
	size    int
	limit   int
}

func (e *sizeError) Error() string {
	return "packet: " + e.channel + " message of " + strconv.Itoa(e.size) +
		" bytes exceeds the limit of " + strconv.Itoa(e.limit) + " bytes"
}

func (e *sizeError) Is(target error) bool { return target == ErrMessageSize }

// wrapped is an error with its own text that matches a sentinel.
type wrapped struct {
	msg    string
	target error
}

func (e *wrapped) Error() string        { return e.msg }
func (e *wrapped) Is(target error) bool { return target == e.target }
