package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Two and four bots play at 100 ms with 1 % loss: points are scored, and
// every client's prediction of the score (the ball, predicted by every
// client) ends equal to the server's.
func TestEveryClientSeesTheServersScore(t *testing.T) {
	for _, n := range []int{2, 4} {
		m, err := Play(n, 30*time.Second, 3)
		require.NoError(t, err)
		assert.Positive(t, m.Server.Left+m.Server.Right, "%d players: points were scored", n)
		require.Len(t, m.Clients, n)
		for i, c := range m.Clients {
			assert.Equal(t, m.Server, c, "%d players: client %d", n, i)
		}
	}
}

// A match is a function of its seed.
func TestSameSeedSameMatch(t *testing.T) {
	a, err := Play(2, 10*time.Second, 9)
	require.NoError(t, err)
	b, err := Play(2, 10*time.Second, 9)
	require.NoError(t, err)
	assert.Equal(t, a, b)
}

// A minute of pong between two bots over a 100 ms link.
func ExamplePlay() {
	m, err := Play(2, time.Minute, 1)
	if err != nil {
		panic(err)
	}
	fmt.Print(m)
	// Output:
	// server: left 15, right 14, 35 bounces
	// client 0: left 15, right 14 (2 mispredictions), 35 bounces heard (36 predicted, 1 cancelled, 0 late)
	// client 1: left 15, right 14 (3 mispredictions), 35 bounces heard (35 predicted, 1 cancelled, 1 late)
}

// update rewrites the pong code shown in docs/getting-started.md.
var update = flag.Bool("update", false, "rewrite the pong code in docs/getting-started.md")

// snippets returns the code docs/getting-started.md shows, by marker:
// netcode.go whole, and Play from main.go with its doc comment.
func snippets(t *testing.T) map[string]string {
	t.Helper()
	netcode, err := os.ReadFile("netcode.go")
	require.NoError(t, err)
	main, err := os.ReadFile("main.go")
	require.NoError(t, err)
	src := string(main)
	start := strings.Index(src, "// Play runs a match")
	end := strings.Index(src, "\n}\n") // the first function's end after it
	for end >= 0 && end < start {
		next := strings.Index(src[end+1:], "\n}\n")
		if next < 0 {
			end = -1
			break
		}
		end += 1 + next
	}
	require.True(t, start >= 0 && end > start, "main.go has Play")
	return map[string]string{
		"examples/pong/netcode.go":   string(netcode),
		"examples/pong/main.go Play": src[start : end+3],
	}
}

// docs/getting-started.md shows netcode.go and Play as they are.
func TestGettingStartedShowsThePongCode(t *testing.T) {
	path := filepath.Join("..", "..", "docs", "getting-started.md")
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	doc := string(b)
	for marker, code := range snippets(t) {
		begin, end := "<!-- BEGIN "+marker+" -->\n", "<!-- END "+marker+" -->"
		i, j := strings.Index(doc, begin), strings.Index(doc, end)
		require.True(t, i >= 0 && j > i, "getting-started.md has the %s block", marker)
		doc = doc[:i+len(begin)] + "```go\n" + code + "```\n" + doc[j:]
	}
	if *update {
		require.NoError(t, os.WriteFile(path, []byte(doc), 0o644))
	}
	assert.Equal(t, doc, string(b), "docs/getting-started.md is stale: go test ./examples/pong -run TestGettingStartedShowsThePongCode -update")
}

// The netcode of a pong-sized game (netcode.go and Play: the schema, the
// wire forms, the Game, running it and reading each end's score) stays
// within 80 lines of code, blank lines, comments and imports left out.
func TestPongPlumbingFitsTheBudget(t *testing.T) {
	n := 0
	for _, code := range snippets(t) {
		n += codeLines(code)
	}
	t.Logf("pong's netcode: %d lines of code", n)
	assert.LessOrEqual(t, n, 80)
	assert.Greater(t, n, 40, "the count sees the code")
}

// codeLines counts the lines of Go source that are neither blank, nor
// comments, nor part of the package clause or an import block.
func codeLines(src string) int {
	n, imports := 0, false
	for line := range strings.Lines(src) {
		l := strings.TrimSpace(line)
		switch {
		case imports:
			imports = l != ")"
		case l == "import (":
			imports = true
		case l == "", strings.HasPrefix(l, "//"), strings.HasPrefix(l, "package "), strings.HasPrefix(l, "import "):
		default:
			n++
		}
	}
	return n
}
