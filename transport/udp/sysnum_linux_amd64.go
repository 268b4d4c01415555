package udp

// sysSendmmsg is sendmmsg's number on linux/amd64, which package syscall
// does not name.
const sysSendmmsg = 307
