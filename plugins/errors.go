package plugins

import (
	"errors"
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
// ErrBMCUnreachable, or any error in the chain with a Retryable() bool
// method returning true (the host's error for a crashed plugin has one).
func IsRetryable(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, ErrBMCUnreachable) {
		return true
	}
	var r interface{ Retryable() bool }
	return errors.As(err, &r) && r.Retryable()
}
