package transport

type Conn interface{}
