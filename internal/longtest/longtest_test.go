package longtest

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestEnabledOnlyForOne(t *testing.T) {
	for v, want := range map[string]bool{"1": true, "": false, "0": false, "true": false, "yes": false, " 1": false} {
		t.Setenv(Env, v)
		assert.Equal(t, want, Enabled(), "%s=%q", Env, v)
	}
}

func TestSkipSkipsUnlessEnabled(t *testing.T) {
	t.Setenv(Env, "")
	reached := false
	t.Run("off", func(t *testing.T) {
		Skip(t)
		reached = true
	})
	assert.False(t, reached, "ran with the long tier off")
	t.Setenv(Env, "1")
	ran := false
	t.Run("on", func(t *testing.T) {
		Skip(t)
		ran = true
	})
	assert.True(t, ran)
}
