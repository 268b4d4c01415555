package web

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// FuzzLinkEndpoint feeds the link endpoint any body and session: it
// answers 200 with a valid link or 400, and never panics.
func FuzzLinkEndpoint(f *testing.F) {
	f.Add("page", `{"RTTms":100,"JitterMS":15,"LossPct":2,"DupPct":0}`)
	f.Add("page", `{"RTTms":1e309}`)
	f.Add("page", `{"LossPct":NaN}`)
	f.Add("", `{}`)
	f.Add("a%00", `{"RTTms":-0}`)
	f.Add("page", strings.Repeat("[", 2000))
	f.Fuzz(func(t *testing.T, session, body string) {
		s := &Server{sessions: sessions{}}
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodPost, "/link", strings.NewReader(body))
		req.URL.RawQuery = "session=" + session
		req.Header.Set("Content-Type", "application/json")
		s.guardPost(s.serveLink)(rec, req)
		switch rec.Code {
		case http.StatusOK:
			require.Len(t, s.sessions.list, 1)
			assert.NoError(t, s.sessions.list[0].link.Validate())
		case http.StatusBadRequest:
			assert.Empty(t, s.sessions.list)
		default:
			t.Fatalf("status %d for %q", rec.Code, body)
		}
	})
}
