// Package control holds the per-connection controllers of the endpoints:
// the server's input buffer and the client's input stream, clock sync and
// lead tracking, RTT, and the interpolation clock.
package control
