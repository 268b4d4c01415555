package udp

func Dial() {}
