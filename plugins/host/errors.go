package host

import (
	"errors"
	"fmt"
	"slices"

	"github.com/rivetmetal/rivet/plugins"
)

// Errors only the host raises: a plugin that crashed, one that shares no
// version with the host, and a plugin's Validate verdict rebuilt from the
// wire. A driver returns the SDK's sentinels (package plugins) instead.

var (
	// ErrPluginCrashed: the plugin process died or its connection broke
	// during the call. Retryable, but the operation may have run: re-read
	// state (get power state) before retrying a non-idempotent action. The
	// concrete error is a *PluginCrashedError naming the driver.
	ErrPluginCrashed = errors.New("driver plugin crashed")
	// ErrIncompatible: the host and the plugin share no protocol or
	// interface version. The concrete error is an *IncompatibleError.
	ErrIncompatible = errors.New("incompatible driver plugin")
)

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
	Interface plugins.Interface
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

// ValidationError is what the host sees of a failed Validate: the problem
// and the driver's reason. errors.Is matches the sentinel of the problem
// (plugins.ErrBMCUnreachable, plugins.ErrCredentialsRefused, plugins.ErrWrongSystemID,
// plugins.ErrInvalidDriverInfo).
type ValidationError struct {
	Problem plugins.ValidationProblem
	Reason  string
	Missing []string
	Invalid []string
}

// ValidationProblem returns e.Problem: plugins.ClassifyValidation reads it.
func (e *ValidationError) ValidationProblem() plugins.ValidationProblem { return e.Problem }

// Error is the driver's reason.
func (e *ValidationError) Error() string { return e.Reason }

// Is matches the sentinel of e.Problem.
func (e *ValidationError) Is(target error) bool {
	switch e.Problem {
	case plugins.ProblemInvalidDriverInfo:
		return target == plugins.ErrInvalidDriverInfo
	case plugins.ProblemUnreachable:
		return target == plugins.ErrBMCUnreachable
	case plugins.ProblemCredentialsRefused:
		return target == plugins.ErrCredentialsRefused
	case plugins.ProblemWrongSystemID:
		return target == plugins.ErrWrongSystemID
	}
	return false
}

// validationError rebuilds the host side's error from the wire.
func validationError(problem, reason string, missing, invalid []string) error {
	p := plugins.ValidationProblem(problem)
	if p == plugins.ProblemNone {
		return nil
	}
	if !slices.Contains([]plugins.ValidationProblem{plugins.ProblemInvalidDriverInfo, plugins.ProblemInvalidInstanceInfo, plugins.ProblemUnreachable,
		plugins.ProblemCredentialsRefused, plugins.ProblemWrongSystemID}, p) {
		p = plugins.ProblemOther // a problem a newer plugin knows and this host does not
	}
	if reason == "" {
		reason = fmt.Sprintf("validation failed: %s", problem)
	}
	return &ValidationError{Problem: p, Reason: reason, Missing: missing, Invalid: invalid}
}
