package surface_test

import (
	"fmt"
	"strings"
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

// The whole module stays at most 200 exported names outside internal/ and
// examples/ (issue 7: a reader can hold the public surface in mind).
func TestModuleSurfaceIsAtMost200Names(t *testing.T) {
	pkgs, err := surface.Count("../..")
	require.NoError(t, err)
	require.NotEmpty(t, pkgs, "the module root has public packages")
	total := 0
	var counts []string
	for _, p := range pkgs {
		total += len(p.Names)
		counts = append(counts, fmt.Sprintf("%s %d", p.Dir, len(p.Names)))
	}
	assert.LessOrEqual(t, total, 200,
		"exported names per package: %s (go run ./internal/surface/cmd/surface -v lists them)", strings.Join(counts, ", "))
}
