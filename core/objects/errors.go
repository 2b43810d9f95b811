package objects

import (
	"errors"
	"fmt"

	"github.com/rivetmetal/rivet/core/version"
)

// ErrFieldType is wrapped when a value given to Set cannot be stored in the
// field.
var ErrFieldType = errors.New("value does not fit the field")

// ErrReadOnly is wrapped when an object loaded read-only
// (Registry.FromDBReadOnly) is given to be saved.
var ErrReadOnly = errors.New("object was loaded read-only and cannot be saved")

// UnknownKindError reports an object kind this registry does not know.
type UnknownKindError struct {
	Kind string
}

// Error implements error.
func (e *UnknownKindError) Error() string {
	return fmt.Sprintf("objects: unknown object kind %q", e.Kind)
}

// IncompatibleVersionError reports a version of a kind that this code cannot
// convert: another major, a minor newer than Latest, or older than Oldest.
type IncompatibleVersionError struct {
	Kind   string
	Got    version.Version
	Latest version.Version
	// Oldest is the oldest version this code can convert from and to.
	Oldest version.Version
}

// Error implements error.
func (e *IncompatibleVersionError) Error() string {
	return fmt.Sprintf("objects: %s version %s is not compatible with this code (it handles %s to %s)",
		e.Kind, e.Got, e.Oldest, e.Latest)
}

// UnknownFieldError reports a field name that the kind does not have at the
// given version. On the wire it means the sender did not downgrade the
// object to a version the receiver knows.
type UnknownFieldError struct {
	Kind    string
	Version version.Version
	Field   string
}

// Error implements error.
func (e *UnknownFieldError) Error() string {
	return fmt.Sprintf("objects: %s %s has no field %q", e.Kind, e.Version, e.Field)
}

// MalformedError reports a wire primitive that is not valid JSON or has a
// value that does not decode into its field. Kind and Field are empty when
// unknown.
type MalformedError struct {
	Kind  string
	Field string
	Err   error
}

// Error implements error.
func (e *MalformedError) Error() string {
	switch {
	case e.Field != "":
		return fmt.Sprintf("objects: malformed %s primitive: field %s: %v", e.Kind, e.Field, e.Err)
	case e.Kind != "":
		return fmt.Sprintf("objects: malformed %s primitive: %v", e.Kind, e.Err)
	}
	return fmt.Sprintf("objects: malformed primitive: %v", e.Err)
}

// Unwrap returns the decoding error.
func (e *MalformedError) Unwrap() error { return e.Err }
