package systems

import "github.com/ghostwire/ghostwire/components"

// What the external tests of this package reach that games do not: the
// reliable channel, until the game's own messages travel on it.

// SendReliable queues msg on the reliable channel of an open connection;
// it goes out with the next flush and again until acknowledged.
func (s *Server) SendReliable(id components.ConnID, msg []byte) error {
	sc := s.conn(id)
	if sc == nil {
		return &connNotOpen{id: id}
	}
	return sc.link.pc.SendReliable(msg)
}

// OnReliable sets the function the client calls with each message of the
// reliable channel, once and in order, during Update.
func (c *Client) OnReliable(f func(msg []byte)) { c.onReliable = f }
