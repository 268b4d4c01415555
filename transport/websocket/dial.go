package websocket

import (
	"context"
	"fmt"

	"github.com/coder/websocket"

	"github.com/ghostwire/ghostwire/transport"
)

// Dial opens a WebSocket connection to url (ws://, wss://, or http:// and
// https:// meaning the same) and returns it as a transport.Conn. ctx bounds the
// handshake only; the connection lasts until either end closes it. It works
// natively and in the browser (GOOS=js GOARCH=wasm), where the browser's
// own WebSocket carries it. It returns the handshake's error, naming url.
func Dial(ctx context.Context, url string, opts Options) (transport.Conn, error) {
	ws, _, err := websocket.Dial(ctx, url, nil)
	if err != nil {
		return nil, fmt.Errorf("websocket: dial %s: %w", url, err)
	}
	return newConn(ws, opts), nil
}
