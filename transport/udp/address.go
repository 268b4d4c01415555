package udp

import (
	"encoding/binary"
	"errors"
	"net/netip"
	"strconv"
)

// Address types on the wire (netcode 1.02: 1 = IPv4, 2 = IPv6).
const (
	addressIPv4 = 1
	addressIPv6 = 2
)

// MaxServerAddresses is the largest number of server addresses a connect
// token may carry.
const MaxServerAddresses = 32

// errAddress is returned for an address the wire format cannot carry or that
// is cut short.
var errAddress = errors.New("udp: bad address")

// addressSize returns the encoded size of a: 7 bytes for IPv4, 19 for IPv6.
func addressSize(a netip.AddrPort) int {
	if a.Addr().Unmap().Is4() {
		return 1 + 4 + 2
	}
	return 1 + 16 + 2
}

// appendAddress appends the wire form of a: type byte, then the address (IPv4
// as four bytes; IPv6 as eight little-endian 16-bit groups), then the port,
// little-endian. An IPv4-mapped IPv6 address is written as IPv4.
func appendAddress(b []byte, a netip.AddrPort) []byte {
	ip := a.Addr().Unmap()
	if ip.Is4() {
		v := ip.As4()
		b = append(b, addressIPv4)
		b = append(b, v[:]...)
	} else {
		v := ip.As16()
		b = append(b, addressIPv6)
		for i := 0; i < 16; i += 2 {
			// Each group is a 16-bit number written little-endian; As16 holds it big-endian.
			b = append(b, v[i+1], v[i])
		}
	}
	return binary.LittleEndian.AppendUint16(b, a.Port())
}

// readAddress decodes one address from the front of b and returns it with
// the number of bytes it used.
func readAddress(b []byte) (netip.AddrPort, int, error) {
	if len(b) < 1 {
		return netip.AddrPort{}, 0, errAddress
	}
	switch b[0] {
	case addressIPv4:
		if len(b) < 7 {
			return netip.AddrPort{}, 0, errAddress
		}
		ip := netip.AddrFrom4([4]byte(b[1:5]))
		return netip.AddrPortFrom(ip, binary.LittleEndian.Uint16(b[5:7])), 7, nil
	case addressIPv6:
		if len(b) < 19 {
			return netip.AddrPort{}, 0, errAddress
		}
		var v [16]byte
		for i := 0; i < 16; i += 2 {
			v[i], v[i+1] = b[1+i+1], b[1+i]
		}
		return netip.AddrPortFrom(netip.AddrFrom16(v), binary.LittleEndian.Uint16(b[17:19])), 19, nil
	}
	return netip.AddrPort{}, 0, errAddress
}

// normalize returns a with an IPv4-mapped IPv6 address unmapped, so the same
// peer seen through a dual-stack socket compares equal to its IPv4 form.
func normalize(a netip.AddrPort) netip.AddrPort {
	return netip.AddrPortFrom(a.Addr().Unmap(), a.Port())
}

// addressList is a fixed-capacity list of server addresses, so decoding a
// token's addresses does not allocate.
type addressList struct {
	n     int
	addrs [MaxServerAddresses]netip.AddrPort
}

// slice returns the addresses in use. The slice aliases l.
func (l *addressList) slice() []netip.AddrPort { return l.addrs[:l.n] }

// contains reports whether a (normalized) is in the list.
func (l *addressList) contains(a netip.AddrPort) bool {
	a = normalize(a)
	for _, x := range l.addrs[:l.n] {
		if x == a {
			return true
		}
	}
	return false
}

// appendAddressList appends the count (u32) and the addresses.
func appendAddressList(b []byte, addrs []netip.AddrPort) []byte {
	b = binary.LittleEndian.AppendUint32(b, uint32(len(addrs)))
	for _, a := range addrs {
		b = appendAddress(b, a)
	}
	return b
}

// readAddressList decodes a count (1..MaxServerAddresses) and that many
// addresses from the front of b into l, returning the bytes used.
func readAddressList(b []byte, l *addressList) (int, error) {
	if len(b) < 4 {
		return 0, errAddress
	}
	n := binary.LittleEndian.Uint32(b)
	if n < 1 || n > MaxServerAddresses {
		return 0, errors.New("udp: token has " + strconv.FormatUint(uint64(n), 10) +
			" server addresses; the allowed range is 1 to " + strconv.Itoa(MaxServerAddresses))
	}
	off := 4
	for i := range int(n) {
		a, k, err := readAddress(b[off:])
		if err != nil {
			return 0, err
		}
		l.addrs[i] = a
		off += k
	}
	l.n = int(n)
	return off, nil
}
