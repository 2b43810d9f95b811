package rpc

import (
	"context"
	"encoding/json"
)

// LocalTransport calls a Server in the same process (all-in-one). Requests
// and errors take the same path as over the wire: versions are checked,
// arguments stay encoded and errors keep only class, code and message.
type LocalTransport struct{ Server *Server }

// Send implements Transport; host is ignored.
func (t LocalTransport) Send(ctx context.Context, _ string, req *Request) (json.RawMessage, error) {
	res, err := t.Server.Dispatch(ctx, req)
	if err != nil {
		class, code, msg := ErrorToWire(err)
		if class == "" {
			return nil, &ProtocolError{Code: code, Message: msg}
		}
		return nil, ErrorFromWire(class, code, msg)
	}
	return res, nil
}
