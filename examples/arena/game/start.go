package game

import "github.com/ghostwire/ghostwire/systems"

// StartServer is the arena's OnStart (NewGame): the game's messages
// (startMessages), then the ball (SpawnBall).
func (s *Schema) StartServer(srv *systems.Server) error {
	if err := startMessages(srv); err != nil {
		return err
	}
	return s.SpawnBall(srv)
}

// startMessages gives a server the arena's messages: the kill feed
// (KillFeed, a resource of its world) and the chat relay. Without the
// ball (Config.Ball off) it is the whole OnStart.
func startMessages(srv *systems.Server) error {
	installKillFeed(srv)
	return systems.Handle(srv.World(), relayChat)
}
