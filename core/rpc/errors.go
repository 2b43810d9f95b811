package rpc

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/rivetmetal/rivet/core/suggest"
	"github.com/rivetmetal/rivet/core/version"
)

// Classed is implemented by errors that cross the wire with their identity:
// a class name (Ironic's exception class, e.g. "NodeLocked") and the HTTP code
// the API answers with.
type Classed interface {
	error
	ErrorClass() string
	HTTPCode() int
}

// RemoteError is an error raised on the other side of an RPC whose class has
// no registered constructor here.
type RemoteError struct {
	Class   string
	Code    int
	Message string
}

func (e *RemoteError) Error() string      { return e.Message }
func (e *RemoteError) ErrorClass() string { return e.Class }
func (e *RemoteError) HTTPCode() int      { return e.Code }

// Is matches any Classed error with the same class, so
// errors.Is(err, &RemoteError{Class: "NodeLocked"}) works on either side.
func (e *RemoteError) Is(target error) bool {
	var c Classed
	return errors.As(target, &c) && c.ErrorClass() == e.Class
}

// CapError is returned before sending when a call needs a newer RPC version
// than the client's cap. The REST API answers it with 406.
type CapError struct {
	Method string
	Arg    string // empty when the method itself is too new
	Needs  version.Version
	Cap    version.Version
}

func (e *CapError) Error() string {
	what := "method " + e.Method
	if e.Arg != "" {
		what = fmt.Sprintf("argument %s of %s", e.Arg, e.Method)
	}
	return fmt.Sprintf("cannot send RPC request: %s needs RPC %s, maximum allowed version is %s (pinned release)", what, e.Needs, e.Cap)
}
func (e *CapError) ErrorClass() string { return "RPCVersionCapError" }
func (e *CapError) HTTPCode() int      { return http.StatusNotAcceptable }

// UnsupportedVersionError is the server's answer to a request at a version it
// does not serve: another major, or a newer minor.
type UnsupportedVersionError struct {
	Method    string
	Requested string
	Served    version.Version
}

func (e *UnsupportedVersionError) Error() string {
	return fmt.Sprintf("RPC version %q of %s is not supported by this conductor (serves %d.0 to %s)",
		e.Requested, e.Method, e.Served.Major, e.Served)
}
func (e *UnsupportedVersionError) ErrorClass() string { return "UnsupportedVersion" }
func (e *UnsupportedVersionError) HTTPCode() int      { return http.StatusInternalServerError }

// InvalidParamsError is a request whose arguments do not fit the method at
// the request's version (JSON-RPC -32602).
type InvalidParamsError struct{ Method, Reason string }

func (e *InvalidParamsError) Error() string {
	return fmt.Sprintf("invalid params for %s: %s", e.Method, e.Reason)
}
func (e *InvalidParamsError) ErrorClass() string { return "InvalidParameterValue" }
func (e *InvalidParamsError) HTTPCode() int      { return http.StatusBadRequest }

// TemporaryFailure means no conductor can take the request now (503).
type TemporaryFailure struct{ Reason string }

func (e *TemporaryFailure) Error() string {
	if e.Reason == "" {
		return "Resource temporarily unavailable, please retry."
	}
	return "Resource temporarily unavailable, please retry. " + e.Reason
}
func (e *TemporaryFailure) ErrorClass() string { return "TemporaryFailure" }
func (e *TemporaryFailure) HTTPCode() int      { return http.StatusServiceUnavailable }

// NoValidHost means no live conductor serves the node's driver and group.
// Enabled, when known, lists the hardware types the group's live
// conductors do serve; the message names them and the option that enables
// one, so a driver author learns why a new hardware type is not served.
type NoValidHost struct {
	Driver, Group string
	Enabled       []string
	// EnabledKnown is true when Enabled was computed (even if empty).
	EnabledKnown bool
}

func (e *NoValidHost) Error() string {
	msg := fmt.Sprintf("No valid host was found. Reason: No conductor service registered which supports driver %s for conductor group %q.", e.Driver, e.Group)
	if !e.EnabledKnown {
		return msg
	}
	served := "none"
	if len(e.Enabled) > 0 {
		served = strings.Join(e.Enabled, ", ")
	}
	if best := suggest.Closest(e.Driver, e.Enabled); best != "" {
		msg += fmt.Sprintf(" Did you mean %q?", best)
	}
	return msg + fmt.Sprintf(" Hardware types enabled on the live conductors of that group: %s. A hardware type is served only when it is listed in [conductor] enabled_hardware_types and a driver plugin serving it is running.", served)
}
func (e *NoValidHost) ErrorClass() string { return "NoValidHost" }
func (e *NoValidHost) HTTPCode() int      { return http.StatusBadRequest }

// ErrorFactory rebuilds a typed error from its wire form.
type ErrorFactory func(message string, code int) error

var (
	factoriesMu sync.RWMutex
	factories   = map[string]ErrorFactory{}
)

// RegisterErrorClass makes errors of class arrive on the client as what f
// builds. Packages owning typed errors register them from cmd wiring.
func RegisterErrorClass(class string, f ErrorFactory) {
	factoriesMu.Lock()
	defer factoriesMu.Unlock()
	factories[class] = f
}

// ErrorFromWire rebuilds an error from the class, code and message it
// crossed the wire with (ErrorToWire): as the constructor registered for
// class builds it (RegisterErrorClass), else as a *RemoteError.
func ErrorFromWire(class string, code int, msg string) error {
	factoriesMu.RLock()
	f := factories[class]
	factoriesMu.RUnlock()
	if f != nil {
		return f(msg, code)
	}
	return &RemoteError{Class: class, Code: code, Message: msg}
}

// errorToWire gives the class, code and message an error crosses the wire
// with. Errors that are not Classed are internal: their text stays in the
// conductor's log and the caller sees a generic message.
func errorToWire(err error) (class string, code int, msg string, known bool) {
	var c Classed
	if errors.As(err, &c) {
		return c.ErrorClass(), c.HTTPCode(), c.Error(), true
	}
	return "InternalError", http.StatusInternalServerError, "Unexpected error raised by RPC", false
}

// Codes of the two errors the dispatcher raises before any handler runs,
// as JSON-RPC 2.0 numbers them (and Ironic's server answers them).
const (
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
)

// ErrorToWire gives the class, code and message a dispatch error crosses
// any transport with. A *MethodNotFoundError has no class (""): it is a
// protocol error, which the client gets as a *ProtocolError rather than
// rebuilding it. An *InvalidParamsError keeps its class with the code
// CodeInvalidParams. Any other error is as errorToWire gives it.
func ErrorToWire(err error) (class string, code int, msg string) {
	var nf *MethodNotFoundError
	if errors.As(err, &nf) {
		return "", CodeMethodNotFound, nf.Error()
	}
	var ip *InvalidParamsError
	if errors.As(err, &ip) {
		return ip.ErrorClass(), CodeInvalidParams, ip.Error()
	}
	class, code, msg, _ = errorToWire(err)
	return class, code, msg
}

// ProtocolError is a protocol-level error (a JSON-RPC -32xxx code, such as
// CodeMethodNotFound) or a transport status the peer answered with (401,
// 405, 413): the client gets it as it is, never rebuilt as a typed error.
type ProtocolError struct {
	Code    int
	Message string
}

func (e *ProtocolError) Error() string { return e.Message }

// ErrUnreachable marks a call that never reached a conductor (the connection
// could not be made), so it is safe to retry on another one.
var ErrUnreachable = errors.New("conductor unreachable")

// UnreachableError wraps the dial failure for one conductor.
type UnreachableError struct {
	Host string
	Err  error
}

func (e *UnreachableError) Error() string {
	return fmt.Sprintf("conductor %s unreachable: %v", e.Host, e.Err)
}
func (e *UnreachableError) Unwrap() []error { return []error{ErrUnreachable, e.Err} }
