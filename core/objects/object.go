package objects

import "slices"

// Object is a versioned object at its kind's latest version. A kind is a
// pointer to a struct that embeds Base and tags every other exported field
// with its canonical name, `rivet:"chassis_id"`; the kind's field table must
// list exactly those names (Register checks it).
type Object interface {
	// Kind returns the registered kind name, e.g. "Node".
	Kind() string
	// Changes returns the object's change set.
	Changes() *ChangeSet
}

// Base carries an object's change set. Every kind embeds it.
type Base struct {
	changes ChangeSet
}

// Changes returns the object's change set.
func (b *Base) Changes() *ChangeSet { return &b.changes }

// ChangeSet tracks which fields of an object changed since it was loaded.
//
// Go cannot intercept field assignment, so a field counts as changed when
// either its value differs (reflect.DeepEqual) from the snapshot taken by the
// last Registry.ResetChanges (FromDB and Deserialize take one), or it was
// marked explicitly (Mark; conversions mark what they change). Callers just
// assign fields and ask Registry.Changed. An object that never had a
// snapshot, such as one built by Registry.New for a create, counts every
// field as changed. The snapshot costs one deep copy of the object per load.
//
// An object loaded read-only (Registry.FromDBReadOnly, for views that never
// save) has no snapshot and cannot be saved: ForDB, ForInsert and
// ResetChanges refuse it with ErrReadOnly, so its missing snapshot can
// never make a save write every field.
type ChangeSet struct {
	// snapshot is a deep copy of the object's fields at the last
	// ResetChanges; it is never modified, so copies of the set share it.
	snapshot Object
	marked   map[string]bool
	readOnly bool
}

// Mark records fields as changed whatever their values, e.g. to force a
// write. It does not check the names; Registry.MarkChanged does.
func (c *ChangeSet) Mark(fields ...string) {
	if c.marked == nil {
		c.marked = map[string]bool{}
	}
	for _, f := range fields {
		c.marked[f] = true
	}
}

// Marked returns the explicitly marked fields, sorted.
func (c *ChangeSet) Marked() []string {
	out := make([]string, 0, len(c.marked))
	for f := range c.marked {
		out = append(out, f)
	}
	slices.Sort(out)
	return out
}

// HasSnapshot reports whether a snapshot was taken; without one every
// field counts as changed.
func (c *ChangeSet) HasSnapshot() bool { return c.snapshot != nil }

// ReadOnly reports whether the object was loaded read-only
// (Registry.FromDBReadOnly): it cannot be saved.
func (c *ChangeSet) ReadOnly() bool { return c.readOnly }

func (c *ChangeSet) mark(set map[string]bool) {
	for f := range set {
		c.Mark(f)
	}
}

// clone copies the change set; snapshot values are never mutated in place,
// so sharing them is safe.
func (c *ChangeSet) clone() ChangeSet {
	out := ChangeSet{snapshot: c.snapshot, readOnly: c.readOnly}
	if len(c.marked) > 0 {
		out.marked = make(map[string]bool, len(c.marked))
		for f := range c.marked {
			out.marked[f] = true
		}
	}
	return out
}
