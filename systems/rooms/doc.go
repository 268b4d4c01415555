// Package rooms runs many matches in one process behind one netcode
// listener: each room is its own world, schedule and tick loop on its own
// goroutine, created and ended at run time, capped per process. A new
// connection is routed to a room by the room named in its connect token's
// encrypted user data (tokens.Claims), never by anything the client can
// change after connecting; a stall in one room delays no other; each
// room's tick time, clients, bytes and drops are measured.
package rooms
