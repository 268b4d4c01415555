package websocket

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDialFailureNamesTheURL(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	url := "ws" + strings.TrimPrefix(srv.URL, "http") + "/nothing"
	_, err := Dial(context.Background(), url, Options{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "websocket: dial "+url+": ")

	_, err = Dial(context.Background(), "ftp://example.invalid/ws", Options{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "ftp://example.invalid/ws")
}
