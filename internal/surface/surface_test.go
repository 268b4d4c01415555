package surface_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/internal/surface"
)

func TestCountListsExportedNamesOfPublicPackagesOnly(t *testing.T) {
	pkgs, err := surface.Count("testdata/mod")
	require.NoError(t, err)
	require.Len(t, pkgs, 2)
	assert.Equal(t, "pub", pkgs[0].Dir)
	assert.Equal(t, []string{"A", "F", "T", "T.M", "V"}, pkgs[0].Names)
	assert.Equal(t, "transport", pkgs[1].Dir)
	assert.Equal(t, []string{"Conn"}, pkgs[1].Names)
}
