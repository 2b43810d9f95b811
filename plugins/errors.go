package plugins

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinel errors. Test with errors.Is; they survive the plugin boundary.
var (
	// ErrNotSupported: the driver (or an older plugin) does not implement the
	// operation or value asked for. Not retryable.
	ErrNotSupported = errors.New("not supported")
	// ErrInvalidDriverInfo: the node's driver_info is missing or has bad
	// keys. Not retryable until an operator fixes the node. The concrete
	// error is an *InvalidDriverInfoError naming the keys.
	ErrInvalidDriverInfo = errors.New("invalid driver_info")
	// ErrBMCUnreachable: the BMC did not answer (timeout, refused, DNS).
	// Retryable.
	ErrBMCUnreachable = errors.New("BMC unreachable")
	// ErrPluginCrashed: the plugin process died or its connection broke
	// during the call. Retryable, but the operation may have run: re-read
	// state (get power state) before retrying a non-idempotent action. The
	// concrete error is a *PluginCrashedError naming the driver.
	ErrPluginCrashed = errors.New("driver plugin crashed")
	// ErrIncompatible: the host and the plugin share no protocol or
	// interface version. The concrete error is an *IncompatibleError.
	ErrIncompatible = errors.New("incompatible driver plugin")
)

// InvalidDriverInfoError names the driver_info keys that are missing or
// invalid. It never holds their values, which may be secrets.
type InvalidDriverInfoError struct {
	Missing []string
	Invalid []string
}

// Error names the keys, never their values.
func (e *InvalidDriverInfoError) Error() string {
	var parts []string
	if len(e.Missing) > 0 {
		parts = append(parts, "missing "+strings.Join(e.Missing, ", "))
	}
	if len(e.Invalid) > 0 {
		parts = append(parts, "invalid "+strings.Join(e.Invalid, ", "))
	}
	return ErrInvalidDriverInfo.Error() + ": " + strings.Join(parts, "; ")
}

// Is makes errors.Is(err, ErrInvalidDriverInfo) true.
func (e *InvalidDriverInfoError) Is(target error) bool { return target == ErrInvalidDriverInfo }

// PluginCrashedError is returned for a call during which the plugin process
// died or became unreachable.
type PluginCrashedError struct {
	// Driver names the plugin (its driver name, e.g. "fake").
	Driver string
	// Err is the transport error seen.
	Err error
}

// Error names the driver and the transport failure.
func (e *PluginCrashedError) Error() string {
	if e.Driver == "" {
		return fmt.Sprintf("%v: %v", ErrPluginCrashed, e.Err)
	}
	return fmt.Sprintf("driver %s: %v: %v", e.Driver, ErrPluginCrashed, e.Err)
}

// Is makes errors.Is(err, ErrPluginCrashed) true.
func (e *PluginCrashedError) Is(target error) bool { return target == ErrPluginCrashed }

// Unwrap returns the transport error.
func (e *PluginCrashedError) Unwrap() error { return e.Err }

// Retryable is always true: the host restarts the plugin.
func (e *PluginCrashedError) Retryable() bool { return true }

// IncompatibleError reports that a host and a plugin share no version of the
// protocol (Interface empty) or of one interface.
type IncompatibleError struct {
	Driver    string
	Interface Interface
	Host      []int
	Plugin    []int
}

// Error names the driver and both version ranges.
func (e *IncompatibleError) Error() string {
	what := "protocol"
	if e.Interface != "" {
		what = "interface " + string(e.Interface)
	}
	return fmt.Sprintf("driver %s: %v: no common %s version: host speaks %v, plugin speaks %v",
		e.Driver, ErrIncompatible, what, e.Host, e.Plugin)
}

// Is makes errors.Is(err, ErrIncompatible) true.
func (e *IncompatibleError) Is(target error) bool { return target == ErrIncompatible }

// retryableError marks an error retryable; see Retryable.
type retryableError struct{ err error }

func (e retryableError) Error() string   { return e.err.Error() }
func (e retryableError) Unwrap() error   { return e.err }
func (e retryableError) Retryable() bool { return true }

// MarkRetryable wraps err so that IsRetryable reports true, also on the host
// side of the plugin boundary. Use it for transient failures that have no
// sentinel (a BMC answering "busy, try later").
func MarkRetryable(err error) error {
	if err == nil {
		return nil
	}
	return retryableError{err}
}

// IsRetryable reports whether retrying the operation may succeed:
// ErrBMCUnreachable, ErrPluginCrashed, or any error in the chain with a
// Retryable() bool method returning true.
func IsRetryable(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, ErrBMCUnreachable) || errors.Is(err, ErrPluginCrashed) {
		return true
	}
	var r interface{ Retryable() bool }
	return errors.As(err, &r) && r.Retryable()
}
