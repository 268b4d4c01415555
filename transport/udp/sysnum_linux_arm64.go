package udp

import "syscall"

// sysSendmmsg is sendmmsg's number on linux/arm64.
const sysSendmmsg = syscall.SYS_SENDMMSG
