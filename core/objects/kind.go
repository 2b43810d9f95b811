package objects

import (
	"fmt"

	"github.com/rivetmetal/rivet/core/version"
)

// Kind declares an object kind for Register.
type Kind struct {
	// Name is the kind's name on the wire and in the release table ("Node").
	Name string
	// New returns a zero object of the kind: a pointer to its struct.
	New func() Object
	// Versions lists every version this code can convert, oldest first,
	// contiguous minors of one major; the last is the latest. Dropping an
	// old version is allowed once no supported release writes it.
	Versions []Step
	// Fields is the field table: exactly the struct's tagged fields.
	Fields []Field
	// Methods lists the signatures of the kind's remote methods (called on
	// the conductor over RPC), e.g. "Save(ctx) error". They are part of the
	// fingerprint: changing one needs a version bump.
	Methods []string
	// Fingerprint pins the kind's shape at its latest version:
	// "<latest>-<hash>". Register recomputes it from the struct (reflection),
	// Fields and Methods and fails on a mismatch, so a change without a
	// version bump cannot go unnoticed.
	Fingerprint string
}

// Step is one version of a kind. Fields whose Since is Version are added
// and removed by the field table; Up and Down handle what is not additive.
type Step struct {
	// Version is the version this step leads to from its predecessor.
	Version version.Version
	// Up converts an object from the predecessor to Version, after the
	// fields new in Version were set to their defaults.
	Up ConvertFunc
	// Down converts an object from Version to the predecessor, before the
	// fields new in Version are reset to their defaults (or removed).
	Down ConvertFunc
	// MethodsOnly records a bump for a remote-method change alone: such a
	// step adds no field and needs no converter.
	MethodsOnly bool
}

// ConvertFunc is a hand-written conversion for one version step.
type ConvertFunc func(c *Conversion) error

// Conversion is what a ConvertFunc works on.
type Conversion struct {
	// Object is the object being converted; converters type-assert it to
	// their kind's struct.
	Object Object
	// RemoveUnavailable is the seed's remove_unavailable_fields flag: true
	// on the wire, false for the DB. Converters mark what they change
	// either way; the boundary decides what to keep.
	RemoveUnavailable bool

	kind   *kind
	marked map[string]bool
}

// Mark records that the conversion changed fields.
func (c *Conversion) Mark(fields ...string) {
	for _, f := range fields {
		c.marked[f] = true
	}
}

// Reset sets a field to its declared default and marks it changed.
func (c *Conversion) Reset(field string) error {
	fi, ok := c.kind.byName[field]
	if !ok {
		return fmt.Errorf("objects: %s has no field %q", c.kind.Name, field)
	}
	fi.reset(c.Object)
	c.Mark(field)
	return nil
}
