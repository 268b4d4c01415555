package main

import (
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestWebRefusesBadAddress: -web serves at an address it can listen on,
// and says which one it could not.
func TestWebRefusesBadAddress(t *testing.T) {
	err := run(t.Context(), []string{"-web", "127.0.0.1:notaport"}, io.Discard, io.Discard)
	assert.ErrorContains(t, err, "web: listening at 127.0.0.1:notaport: ")
}
