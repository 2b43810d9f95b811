package conductor

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/rivetmetal/rivet/core/rpc"
	"github.com/rivetmetal/rivet/db"
	"github.com/rivetmetal/rivet/plugins"
)

// Error is a conductor error that crosses the RPC boundary with its Ironic
// exception class and HTTP code (it implements rpc.Classed).
type Error struct {
	Class string
	Code  int
	Msg   string
	Err   error // optional cause, kept for errors.Is
}

// Error returns the message the REST API shows.
func (e *Error) Error() string { return e.Msg }

// ErrorClass is Ironic's exception class name.
func (e *Error) ErrorClass() string { return e.Class }

// HTTPCode is the status the REST API answers with.
func (e *Error) HTTPCode() int { return e.Code }

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Retryable reports whether the same call may succeed later.
func (e *Error) Retryable() bool {
	return e.Class == "NodeLocked" || e.Code == http.StatusServiceUnavailable
}

var _ rpc.Classed = (*Error)(nil)

func classed(class string, code int, err error, format string, args ...any) *Error {
	return &Error{Class: class, Code: code, Msg: fmt.Sprintf(format, args...), Err: err}
}

// errNodeLocked is Ironic's NodeLocked (409) for a lease held elsewhere.
func errNodeLocked(e *db.NodeLockedError) *Error {
	return classed("NodeLocked", http.StatusConflict, e, "%s", e.Error())
}

// errNodeNotFound is Ironic's NodeNotFound (404).
func errNodeNotFound(ident string, err error) *Error {
	return classed("NodeNotFound", http.StatusNotFound, err, "Node %s could not be found.", ident)
}

// errDriverNotFound is Ironic's DriverNotFound for a hardware type this
// conductor does not serve.
func errDriverNotFound(hw string) *Error {
	return classed("DriverNotFound", http.StatusNotFound, nil,
		"Could not find the following driver(s) or hardware type(s): %s.", hw)
}

// errInvalidParameter is Ironic's InvalidParameterValue (400).
func errInvalidParameter(format string, args ...any) *Error {
	return classed("InvalidParameterValue", http.StatusBadRequest, nil, format, args...)
}

// errInvalidState is Ironic's InvalidState (409).
func errInvalidState(format string, args ...any) *Error {
	return classed("InvalidState", http.StatusConflict, nil, format, args...)
}

// errUnsupported is Ironic's UnsupportedDriverExtension (400).
func errUnsupported(hw, extension string) *Error {
	return classed("UnsupportedDriverExtension", http.StatusBadRequest, plugins.ErrNotSupported,
		"Driver %s does not support %s (disabled or not implemented).", hw, extension)
}

// errPowerUnsupported is Ironic's InvalidParameterValue (400) for a power
// target the node's driver does not support ("The driver %s does not
// support the power state, %s"), or for a timeout it cannot honour, with
// the reason: for a plugin, what was negotiated with it.
func errPowerUnsupported(hw string, target plugins.PowerState, timeout bool, err error) *Error {
	what := "the power state, " + string(target)
	if timeout && !target.Soft() {
		what = "a timeout for the power state, " + string(target)
	}
	reason := strings.TrimSuffix(err.Error(), ": "+plugins.ErrNotSupported.Error())
	return classed("InvalidParameterValue", http.StatusBadRequest, err, "The driver %s does not support %s: %s", hw, what, reason)
}

// errMaintenance is Ironic's NodeInMaintenance (400).
func errMaintenance(action, node string) *Error {
	return classed("NodeInMaintenance", http.StatusBadRequest, nil,
		"The requested action %q can not be performed on node %q because it is in maintenance mode.", action, node)
}

// errShuttingDown answers RPCs that arrive after shutdown began: the API
// retries them on a fresh ring.
func errShuttingDown(host string) *Error {
	return classed("TemporaryFailure", http.StatusServiceUnavailable, nil,
		"Resource temporarily unavailable, please retry. Conductor %s is shutting down.", host)
}

// databaseError classes an error the database caused, which would
// otherwise cross the RPC boundary as an anonymous internal error (500):
// unreachable is DatabaseUnavailable (503: the client may retry), full is
// StorageFull (507). Not TemporaryFailure, which promises the call was not
// acted on (the API resends it elsewhere): a connection lost mid-call
// promises nothing. The cause goes to the log only. Other errors are
// returned unchanged.
func (s *Service) databaseError(method string, err error) error {
	var c rpc.Classed
	if errors.As(err, &c) {
		return err
	}
	switch {
	case db.IsStorageFull(err):
		s.log.Error("RPC failed: the database is out of space", "method", method, "error", err)
		return classed("StorageFull", http.StatusInsufficientStorage, err,
			"The database is out of storage space; the change was not saved. Retry once space is freed.")
	case db.IsUnavailable(err):
		s.log.Error("RPC failed: the database is unavailable", "method", method, "error", err)
		return classed("DatabaseUnavailable", http.StatusServiceUnavailable, err,
			"Resource temporarily unavailable, please retry. The database cannot be reached.")
	}
	return err
}

// driverError names the driver, the BMC and the operation; it is what
// last_error records and what synchronous driver calls return. The driver's
// own message never carries driver_info values (plugins mask them), and the
// BMC is named by address only.
func driverError(hw, bmc, op string, err error) *Error {
	code := http.StatusInternalServerError
	if plugins.IsRetryable(err) {
		code = http.StatusServiceUnavailable
	}
	if errors.Is(err, plugins.ErrNotSupported) {
		code = http.StatusBadRequest
	}
	where := ""
	if bmc != "" {
		where = " (BMC " + bmc + ")"
	}
	msg := strings.TrimPrefix(err.Error(), "driver ")
	return classed("DriverOperationError", code, err, "Driver %s failed to %s%s: %s", hw, op, where, msg)
}
