package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"syscall"

	"github.com/rivetmetal/rivet/core/rpc"
	"github.com/rivetmetal/rivet/db"
	"github.com/rivetmetal/rivet/plugins/redact"
)

// faultBody is the inner document of an error raised by a resource handler
// (Ironic's method.format_exception).
type faultBody struct {
	FaultCode   string  `json:"faultcode"`
	FaultString string  `json:"faultstring"`
	DebugInfo   *string `json:"debuginfo"`
}

// routingBody is the inner document of an error raised while routing, such
// as the version check (webob's shape in Ironic).
type routingBody struct {
	Code        int    `json:"code"`
	Title       string `json:"title"`
	Description string `json:"description"`
}

// WriteFault writes Ironic's error body for a handler error:
// {"error_message": "{\"faultcode\": \"Client\", \"faultstring\": msg, \"debuginfo\": null}"}.
// faultcode is "Client" for 4xx and "Server" otherwise. msg is masked
// (redact.Text): it may relay a conductor's or a driver's error quoting a
// BMC URL.
func WriteFault(w http.ResponseWriter, status int, msg string) {
	code := "Server"
	if status >= 400 && status < 500 {
		code = "Client"
	}
	writeErrorMessage(w, status, faultBody{FaultCode: code, FaultString: redact.Text(msg)})
}

// writeRoutingError writes the webob-shaped error Ironic gives for checks
// that run before a handler (e.g. the microversion check on /v1 paths).
func writeRoutingError(w http.ResponseWriter, status int, description string) {
	writeErrorMessage(w, status, routingBody{Code: status, Title: http.StatusText(status), Description: redact.Text(description)})
}

func writeErrorMessage(w http.ResponseWriter, status int, inner any) {
	innerJSON, _ := json.Marshal(inner)
	body, _ := json.Marshal(map[string]string{"error_message": string(innerJSON)})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// Error is a client-visible error with Ironic's status and message. Handlers
// return it; the router writes it with WriteFault.
type Error struct {
	Status  int
	Message string
}

func (e *Error) Error() string { return e.Message }

// HTTPCode implements rpc.Classed's status part.
func (e *Error) HTTPCode() int { return e.Status }

// errorf returns an *Error with a formatted message.
func errorf(status int, format string, args ...any) *Error {
	return &Error{Status: status, Message: fmt.Sprintf(format, args...)}
}

// Ironic's messages used by several resources.
const (
	msgNotAcceptable = "Request not acceptable."
	msgNotFound      = "Resource could not be found."
	msgTooLarge      = "Request is too large."
	msgDBUnavailable = "Resource temporarily unavailable, please retry. The database cannot be reached."
	msgStorageFull   = "The database is out of storage space; the change was not saved. Retry once space is freed."
)

// errNotAcceptable is Ironic's NotAcceptable: a feature newer than the
// request's microversion.
func errNotAcceptable() *Error {
	return &Error{Status: http.StatusNotAcceptable, Message: msgNotAcceptable}
}

// statusOf returns the HTTP status and message for err: an *Error or an RPC
// Classed error keeps its code and text; a database that is down or full is
// a 503 or 507 with a fixed text; anything else is a 500. known is false
// when the error's own text belongs in the log rather than in the answer.
func statusOf(err error) (int, string, bool) {
	var ae *Error
	if errors.As(err, &ae) {
		return ae.Status, ae.Message, true
	}
	var c rpc.Classed
	if errors.As(err, &c) {
		code := c.HTTPCode()
		if code < 400 || code > 599 {
			code = http.StatusInternalServerError
		}
		return code, c.Error(), true
	}
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return http.StatusRequestEntityTooLarge, msgTooLarge, true
	}
	if db.IsUniqueViolation(err) {
		// A concurrent create won the race the handler's check lost.
		return http.StatusConflict, "The resource already exists.", true
	}
	// A conductor that cannot be reached (stopped, killed, or a name that
	// does not resolve from this API host) is named as such: it is not the
	// database's trouble, and the fix is on that conductor's host.
	var ue *rpc.UnreachableError
	if errors.As(err, &ue) {
		return http.StatusServiceUnavailable, unreachableMessage(ue), true
	}
	// The database's own trouble: the cause stays in the log, the client
	// learns it may retry (503) or that space must be freed first (507).
	if db.IsStorageFull(err) {
		return http.StatusInsufficientStorage, msgStorageFull, false
	}
	if db.IsUnavailable(err) {
		return http.StatusServiceUnavailable, msgDBUnavailable, false
	}
	return http.StatusInternalServerError, "Internal Server Error", false
}

// unreachableMessage tells a client which conductor could not be reached,
// why, and what to check; the nodes it manages move to the other conductors
// once its heartbeat is older than [conductor] heartbeat_timeout.
func unreachableMessage(ue *rpc.UnreachableError) string {
	var dns *net.DNSError
	cause := "it does not answer"
	switch {
	case errors.As(ue.Err, &dns):
		cause = "its name does not resolve from this API host (every API dials a conductor at its [DEFAULT] host: " +
			"make that name resolve to the conductor's [json_rpc] host_ip)"
	case errors.Is(ue.Err, syscall.ECONNREFUSED):
		cause = "nothing listens at its JSON-RPC address (is rivet conductor running there?)"
	case ue.Err != nil:
		cause = ue.Err.Error()
	}
	return fmt.Sprintf("Resource temporarily unavailable, please retry. The conductor %s that manages this resource "+
		"cannot be reached: %s. If it has stopped, its nodes move to the other conductors once its heartbeat is older "+
		"than [conductor] heartbeat_timeout.", ue.Host, cause)
}
