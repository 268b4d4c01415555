//go:build linux && (amd64 || arm64)

package udp

// sendmmsg reports whether a batch is written with one system call.
const sendmmsg = true
