package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// -record writes the match and names the file and its size in the
// summary; -replay prints the same outcome lines and the hash check.
func TestRecordThenReplay(t *testing.T) {
	file := filepath.Join(t.TempDir(), "match.gwr")
	var rec, errOut bytes.Buffer
	require.NoError(t, run(t.Context(), []string{"-clients", "3", "-duration", "3s", "-loss", "5", "-rtt", "150ms", "-quiet", "-record", file},
		&rec, &errOut), "%s", errOut.String())
	st, err := os.Stat(file)
	require.NoError(t, err)
	require.Contains(t, rec.String(), "recording: "+file+", "+itoa(st.Size())+" bytes")
	var rep bytes.Buffer
	require.NoError(t, run(t.Context(), []string{"-replay", file}, &rep, &errOut), "%s", errOut.String())
	require.Contains(t, rep.String(), "every one equal to the recording's")
	require.Contains(t, rep.String(), "replay of "+file+": "+itoa(st.Size())+" bytes")
	for _, prefix := range []string{"\narena: ", "\noutcome: ", "\nshots: ", "\nrockets: "} {
		require.Equal(t, line(rec.String(), prefix), line(rep.String(), prefix), "the line %q", prefix)
	}

	// A damaged file is refused, naming where.
	b, err := os.ReadFile(file)
	require.NoError(t, err)
	b[len(b)/2] ^= 1
	require.NoError(t, os.WriteFile(file, b, 0o644))
	require.ErrorContains(t, run(t.Context(), []string{"-replay", file}, &rep, &errOut), "checksum does not match")
}

// line returns the line of s that starts with prefix (after a newline).
func line(s, prefix string) string {
	i := strings.Index(s, prefix)
	if i < 0 {
		return ""
	}
	rest := s[i+1:]
	if j := strings.IndexByte(rest, '\n'); j >= 0 {
		return rest[:j]
	}
	return rest
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
