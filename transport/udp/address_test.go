package udp

import (
	"encoding/hex"
	"net/netip"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAddressEncoding(t *testing.T) {
	a := netip.MustParseAddrPort("127.0.0.1:40000")
	assert.Equal(t, "017f000001409c", hex.EncodeToString(appendAddress(nil, a)))
	assert.Equal(t, 7, addressSize(a))

	v6 := netip.MustParseAddrPort("[2001:db8::1]:40000")
	b := appendAddress(nil, v6)
	assert.Equal(t, "02"+"0120"+"b80d"+"0000"+"0000"+"0000"+"0000"+"0000"+"0100"+"409c", hex.EncodeToString(b),
		"each group little-endian")
	assert.Equal(t, 19, addressSize(v6))

	for _, x := range []netip.AddrPort{a, v6} {
		got, n, err := readAddress(appendAddress(nil, x))
		require.NoError(t, err)
		assert.Equal(t, x, got)
		assert.Equal(t, addressSize(x), n)
	}

	mapped := netip.MustParseAddrPort("[::ffff:10.0.0.1]:5")
	assert.Equal(t, appendAddress(nil, netip.MustParseAddrPort("10.0.0.1:5")), appendAddress(nil, mapped))
}

func TestReadAddressRejects(t *testing.T) {
	for name, b := range map[string][]byte{
		"empty":      nil,
		"type 0":     {0, 1, 2, 3, 4, 5, 6},
		"type 3":     {3, 1, 2, 3, 4, 5, 6},
		"short ipv4": {1, 1, 2, 3, 4, 5},
		"short ipv6": append([]byte{2}, make([]byte, 17)...),
	} {
		_, _, err := readAddress(b)
		assert.Error(t, err, name)
	}
}

func TestReadAddressListCount(t *testing.T) {
	var l addressList
	_, err := readAddressList([]byte{0, 0, 0, 0}, &l)
	assert.ErrorContains(t, err, "0 server addresses")
	_, err = readAddressList([]byte{33, 0, 0, 0}, &l)
	assert.ErrorContains(t, err, "33 server addresses")
}
