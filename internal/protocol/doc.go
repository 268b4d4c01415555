// Package protocol is the message protocol between the endpoints: the
// handshake (hello, welcome, reject), input batches, snapshots, the
// disconnect, predicted events and the game's own messages, each a
// versioned packet whose decoder refuses anything a writer never produces.
package protocol
