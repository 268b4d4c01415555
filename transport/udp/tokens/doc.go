// Package tokens is a connect-token service a matchmaker calls: an HTTP
// handler that answers a POST with a JSON body (room, client identity,
// optional user data) with a netcode 1.02 connect token naming the
// server's public address, and the claims (room, identity) such a token
// carries to the server in its encrypted user data.
//
// It is hardened as a service on the internet must be: a shared secret
// (or mutual TLS around it), a JSON content type (a browser cannot send
// that across origins without a preflight the handler never answers), a
// body cap, rate limits overall and per identity, random client IDs, and
// every refusal counted by reason. The room and identity are the token
// service's word, in user data the client cannot read or change, so a
// server may route by them (a room) and give a reconnecting player its
// place back (an identity).
package tokens
