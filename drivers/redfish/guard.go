package redfish

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
)

// maxResponseBytes bounds one BMC answer: a Redfish resource is a few KiB,
// and a hostile or broken BMC must not make the driver buffer without end.
const maxResponseBytes = 8 << 20

// responseGuard refuses BMC answers gofish cannot be trusted with before
// gofish sees them: a successful GET whose body is not one JSON object
// (gofish dereferences the nil a "null" decodes to, some of it in
// goroutines of its own where no recover reaches, which would kill the
// plugin), and any body larger than maxResponseBytes. A refused answer is
// a transport error naming the method and path, never the body.
type responseGuard struct{ next http.RoundTripper }

// RoundTrip implements http.RoundTripper.
func (g responseGuard) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := g.next.RoundTrip(req)
	if err != nil || req.Method == http.MethodHead {
		return resp, err
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes+1))
	resp.Body.Close()
	if err != nil {
		return nil, fmt.Errorf("read the answer to %s %s: %w", req.Method, req.URL.Path, err)
	}
	if len(data) > maxResponseBytes {
		return nil, fmt.Errorf("the answer to %s %s is larger than %d bytes", req.Method, req.URL.Path, maxResponseBytes)
	}
	if req.Method == http.MethodGet && resp.StatusCode/100 == 2 && !isJSONObject(data) {
		return nil, fmt.Errorf("the answer to GET %s is not a JSON object", req.URL.Path)
	}
	resp.Body = io.NopCloser(bytes.NewReader(data))
	resp.ContentLength = int64(len(data))
	return resp, nil
}

func isJSONObject(data []byte) bool {
	trimmed := bytes.TrimSpace(data)
	return len(trimmed) > 0 && trimmed[0] == '{' && json.Valid(trimmed)
}
