package agones

import "fmt"

// Error is an error the sidecar answered with: the HTTP status and the
// gateway's body, {"code", "message", "details"} (code is a gRPC status
// code: 3 invalid argument, 5 not found, 12 unimplemented, 2 unknown).
type Error struct {
	Status  int    // HTTP status
	Code    int    `json:"code"`
	Message string `json:"message"`
	Call    string // the method and path called
}

func (e *Error) Error() string {
	return fmt.Sprintf("agones: %s: sidecar answered %d (code %d): %s", e.Call, e.Status, e.Code, e.Message)
}
