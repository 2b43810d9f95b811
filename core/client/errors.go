package client

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/rivetmetal/rivet/core/version"
)

var (
	// ErrNotFound matches an *APIError with status 404.
	ErrNotFound = errors.New("not found")
	// ErrConflict matches an *APIError with status 409 (e.g. node locked).
	ErrConflict = errors.New("conflict")
	// ErrNotAcceptable matches an *APIError with status 406 that is not a
	// version mismatch: the request used a feature newer than its version.
	ErrNotAcceptable = errors.New("not acceptable at this API version")
)

// APIError is an error answer from the server.
type APIError struct {
	// Method and Path identify the request.
	Method, Path string
	// Status is the HTTP status code.
	Status int
	// Message is the faultstring or description of Ironic's error body, or
	// the start of the body when it is not Ironic's shape.
	Message string
	// RequestID is the Openstack-Request-Id of the answer, if any.
	RequestID string
	// Version is the microversion the server applied, if it said.
	Version string
}

// Error renders one line: "GET /v1/nodes/x: 404 Not Found: Node x could not
// be found. (request req-…)".
func (e *APIError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s: %d %s", e.Method, e.Path, e.Status, http.StatusText(e.Status))
	if e.Message != "" {
		b.WriteString(": " + e.Message)
	}
	if e.RequestID != "" {
		b.WriteString(" (request " + e.RequestID + ")")
	}
	return b.String()
}

// Is lets errors.Is match the sentinels by status.
func (e *APIError) Is(target error) bool {
	switch target {
	case ErrNotFound:
		return e.Status == http.StatusNotFound
	case ErrConflict:
		return e.Status == http.StatusConflict
	case ErrNotAcceptable:
		return e.Status == http.StatusNotAcceptable
	}
	return false
}

// ParseErrorBody extracts the message of an Ironic error body:
// {"error_message": "<JSON string>"} whose inner document has a faultstring
// (handler errors) or a description (routing errors, e.g. version checks).
// error_message may also be an object or a plain string. Any other body
// gives its first line, trimmed, so the user still sees something.
func ParseErrorBody(body []byte) string {
	var outer struct {
		ErrorMessage json.RawMessage `json:"error_message"`
	}
	if err := json.Unmarshal(body, &outer); err == nil && len(outer.ErrorMessage) > 0 {
		inner := []byte(outer.ErrorMessage)
		var s string
		if json.Unmarshal(inner, &s) == nil {
			inner = []byte(s)
		}
		var doc struct {
			FaultString string `json:"faultstring"`
			Description string `json:"description"`
		}
		if json.Unmarshal(inner, &doc) == nil {
			if doc.FaultString != "" {
				return wholeMessage(doc.FaultString)
			}
			if doc.Description != "" {
				return wholeMessage(doc.Description)
			}
		}
		if s != "" {
			return wholeMessage(s)
		}
	}
	return oneLine(string(body))
}

// wholeMessage renders an API's error message on one line, whole: its end
// is often what says how to fix the request. A Python traceback a server
// appended is left out.
func wholeMessage(s string) string {
	if i := strings.Index(s, "Traceback (most recent call last)"); i >= 0 {
		s = s[:i]
	}
	return strings.Join(strings.Fields(s), " ")
}

// maxForeignBody bounds what is shown of an answer that is not Ironic's
// error body (a proxy's HTML page, say).
const maxForeignBody = 300

// oneLine keeps the first line of a body that is not Ironic's error shape,
// at most maxForeignBody bytes, cut at a word.
func oneLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = strings.TrimSpace(s[:i])
	}
	if len(s) > maxForeignBody {
		cut := strings.LastIndexByte(s[:maxForeignBody], ' ')
		if cut <= 0 {
			cut = maxForeignBody
			for cut > 0 && !utf8.RuneStart(s[cut]) {
				cut--
			}
		}
		s = strings.TrimSpace(s[:cut]) + " …"
	}
	return s
}

// VersionError is a microversion the client and the server cannot agree on.
type VersionError struct {
	// Endpoint is the API endpoint (base URL with /v1).
	Endpoint string
	// Requested is what the client sent: "1.15" or "latest".
	Requested string
	// ClientMin and ClientMax are the client's range.
	ClientMin, ClientMax version.Version
	// ServerMin and ServerMax are the server's range from the 406; zero when
	// NoMicroversions is set.
	ServerMin, ServerMax version.Version
	// NoMicroversions is set when the server sent no version headers at all:
	// it predates microversions and serves 1.1 semantics only (use case 3B).
	NoMicroversions bool
	// UserGiven is set when the version came from the caller, which is why
	// the client did not downgrade.
	UserGiven bool
}

// Error names both ranges, or explains that the server has none.
func (e *VersionError) Error() string {
	if e.NoMicroversions {
		return fmt.Sprintf("the server at %s does not support API microversions (it sent no %s header), so API %s cannot be used; it speaks only API %s",
			e.Endpoint, HeaderVersion, e.Requested, MinVersion)
	}
	return fmt.Sprintf("API version %s is not supported: the server at %s supports %s to %s, this client supports %s to %s",
		e.Requested, e.Endpoint, e.ServerMin, e.ServerMax, e.ClientMin, e.ClientMax)
}

// FeatureVersionError is a feature the microversion in use does not have:
// the caller asked for an older version, or the server (or the release it is
// pinned to) serves an older API. Either the client refused before sending
// (Err is nil), or the server answered as for an older version (a newer
// resource's 404, in Err).
type FeatureVersionError struct {
	// Feature names what was asked ("the node VIF API", "soft power (--soft)").
	Feature string
	// Needs is the microversion that introduced it.
	Needs version.Version
	// Served is the version in use: the one the server applied, or the one
	// the caller asked for (UserGiven).
	Served version.Version
	// Endpoint is the API endpoint.
	Endpoint string
	// UserGiven is set when Served came from the caller.
	UserGiven bool
	// Err is the server's answer; nil when nothing was sent.
	Err error
}

// Error says which version the feature needs and which one was used.
func (e *FeatureVersionError) Error() string {
	switch {
	case e.UserGiven:
		return fmt.Sprintf("%s needs API %s, but API %s was asked for", e.Feature, e.Needs, e.Served)
	case e.Err != nil:
		return fmt.Sprintf("%s needs API %s, but the server answered at API %s", e.Feature, e.Needs, e.Served)
	}
	return fmt.Sprintf("%s needs API %s, but the server at %s serves up to %s", e.Feature, e.Needs, e.Endpoint, e.Served)
}

// Unwrap returns the server's answer, if any.
func (e *FeatureVersionError) Unwrap() error { return e.Err }

// ConnectError is a request that never got an HTTP answer (connection
// refused, DNS failure, timeout).
type ConnectError struct {
	// Endpoint is the API endpoint the client was aimed at.
	Endpoint string
	// Err is the transport error.
	Err error
}

// Error names the endpoint and the cause.
func (e *ConnectError) Error() string {
	return fmt.Sprintf("cannot reach the API at %s: %v", e.Endpoint, e.Err)
}

// Unwrap returns the transport error.
func (e *ConnectError) Unwrap() error { return e.Err }
