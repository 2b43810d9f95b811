package objects

import (
	"fmt"
	"reflect"

	"github.com/rivetmetal/rivet/core/version"
)

// New returns an object of kind with every field at its default and no
// snapshot, so every field counts as changed (what a create writes).
func (r *Registry) New(kind string) (Object, error) {
	kd, err := r.lookup(kind)
	if err != nil {
		return nil, err
	}
	return kd.newDefault(), nil
}

func (kd *kind) newDefault() Object {
	obj := kd.New()
	for _, fi := range kd.fields {
		fi.reset(obj)
	}
	return obj
}

// Copy returns a deep copy of obj, change set included; nil maps and
// slices of non-nullable fields become their defaults.
func (r *Registry) Copy(obj Object) (Object, error) {
	kd, err := r.kindOf(obj)
	if err != nil {
		return nil, err
	}
	return kd.copy(obj), nil
}

// copy deep-copies obj; nil maps and slices of non-nullable fields become
// their defaults, so what is written or sent is never nil.
func (kd *kind) copy(obj Object) Object {
	out := kd.New()
	dst, src := reflect.ValueOf(out).Elem(), reflect.ValueOf(obj).Elem()
	for _, fi := range kd.fields {
		fi.copyInto(fi.in(dst), fi.normalized(src))
	}
	*out.Changes() = obj.Changes().clone()
	return out
}

// FieldTable returns kind's field table (latest version), in declaration order.
func (r *Registry) FieldTable(kind string) ([]Field, error) {
	kd, err := r.lookup(kind)
	if err != nil {
		return nil, err
	}
	out := make([]Field, len(kd.fields))
	for i, fi := range kd.fields {
		out[i] = fi.Field
	}
	return out, nil
}

// FieldsAt returns the names of kind's fields available at v, in
// declaration order; nil for an unknown kind. The REST API hides the others.
func (r *Registry) FieldsAt(kind string, v version.Version) []string {
	kd, ok := r.kinds[kind]
	if !ok {
		return nil
	}
	var out []string
	for _, fi := range kd.fields {
		if fi.availableAt(v) {
			out = append(out, fi.Name)
		}
	}
	return out
}

// Available reports whether kind has field at version v.
func (r *Registry) Available(kind, field string, v version.Version) bool {
	kd, ok := r.kinds[kind]
	if !ok {
		return false
	}
	fi, ok := kd.byName[field]
	return ok && fi.availableAt(v)
}

func (fi *fieldInfo) availableAt(v version.Version) bool {
	return v.Major == fi.Since.Major && v.Minor >= fi.Since.Minor
}

func (kd *kind) field(name string) (*fieldInfo, error) {
	fi, ok := kd.byName[name]
	if !ok {
		return nil, &UnknownFieldError{Kind: kd.Name, Version: kd.latest(), Field: name}
	}
	return fi, nil
}

// Get returns the value of obj's field by canonical name. Maps and slices
// are returned as they are, not copied.
func (r *Registry) Get(obj Object, field string) (any, error) {
	kd, err := r.kindOf(obj)
	if err != nil {
		return nil, err
	}
	fi, err := kd.field(field)
	if err != nil {
		return nil, err
	}
	return fi.value(obj).Interface(), nil
}

// Values returns every field of obj by canonical name (the DB layer writes
// the changed ones). Maps and slices are shared with obj, not copied.
func (r *Registry) Values(obj Object) (map[string]any, error) {
	kd, err := r.kindOf(obj)
	if err != nil {
		return nil, err
	}
	out := make(map[string]any, len(kd.fields))
	for _, fi := range kd.fields {
		out[fi.Name] = fi.value(obj).Interface()
	}
	return out, nil
}

// Set stores value in obj's field by canonical name. value must have the
// field's Go type; for a pointer field *T a T is also accepted (stored by
// copy), and nil stores NULL. A nil map or slice in a non-nullable field
// becomes the field's default. Errors wrap ErrFieldType or are an
// *UnknownFieldError.
func (r *Registry) Set(obj Object, field string, value any) error {
	kd, err := r.kindOf(obj)
	if err != nil {
		return err
	}
	fi, err := kd.field(field)
	if err != nil {
		return err
	}
	dst := fi.value(obj)
	switch v := reflect.ValueOf(value); {
	case value == nil && fi.Nullable:
		dst.SetZero()
	case value == nil:
		return fmt.Errorf("objects: %s.%s: %w: nil for a non-nullable %s", kd.Name, field, ErrFieldType, fi.typ)
	case v.Type() == fi.typ:
		dst.Set(v)
	case fi.Nullable && v.Type() == fi.typ.Elem():
		p := reflect.New(v.Type())
		p.Elem().Set(v)
		dst.Set(p)
	default:
		return fmt.Errorf("objects: %s.%s: %w: got %T, want %s", kd.Name, field, ErrFieldType, value, fi.typ)
	}
	fi.normalize(obj)
	return nil
}

// Pointer returns a pointer to obj's field by canonical name (e.g. *string
// for "driver", **string for "name"), for decoders that fill in place.
func (r *Registry) Pointer(obj Object, field string) (any, error) {
	kd, err := r.kindOf(obj)
	if err != nil {
		return nil, err
	}
	fi, err := kd.field(field)
	if err != nil {
		return nil, err
	}
	return fi.value(obj).Addr().Interface(), nil
}

// Changed returns obj's changed fields, sorted: the marked ones plus those
// whose value differs from the snapshot; every field when there is no
// snapshot. See ChangeSet.
func (r *Registry) Changed(obj Object) ([]string, error) {
	kd, err := r.kindOf(obj)
	if err != nil {
		return nil, err
	}
	return kd.changed(obj), nil
}

func (kd *kind) changed(obj Object) []string {
	return kd.changedAs(obj, false)
}

// changedAs is changed; with normalized, as if obj's nil maps and slices
// of non-nullable fields held their defaults (what a copy holds).
func (kd *kind) changedAs(obj Object, normalized bool) []string {
	cs := obj.Changes()
	var out []string
	if cs.snapshot == nil {
		if len(kd.sorted) == 0 {
			return nil
		}
		out = make([]string, len(kd.sorted))
		for i, fi := range kd.sorted {
			out[i] = fi.Name
		}
		return out
	}
	base, snap := reflect.ValueOf(obj).Elem(), reflect.ValueOf(cs.snapshot).Elem()
	for _, fi := range kd.sorted {
		v := fi.in(base)
		if normalized {
			v = fi.normalized(base)
		}
		if cs.marked[fi.Name] || !fi.equal(fi.in(snap), v) {
			out = append(out, fi.Name)
		}
	}
	return out
}

// ResetChanges takes a new snapshot of obj and clears its marks: nothing
// is changed afterwards. The DB layer calls it after a successful write.
// An object loaded read-only is ErrReadOnly: it stays unsaveable.
func (r *Registry) ResetChanges(obj Object) error {
	kd, err := r.kindOf(obj)
	if err != nil {
		return err
	}
	if err := kd.refuseReadOnly(obj); err != nil {
		return err
	}
	kd.resetChanges(obj)
	return nil
}

func (kd *kind) resetChanges(obj Object) {
	snap := kd.New()
	dst, src := reflect.ValueOf(snap).Elem(), reflect.ValueOf(obj).Elem()
	for _, fi := range kd.fields {
		fi.snapshotInto(fi.in(dst), fi.in(src))
	}
	*obj.Changes() = ChangeSet{snapshot: snap}
}

// emptySnapshotMap stands for every empty map[string]any of a snapshot.
// Snapshots are only ever compared against (ChangeSet), never written to
// or handed out, so they can share it; a node has a dozen such fields,
// most of them empty, and a map each was a third of a snapshot's
// allocations.
var emptySnapshotMap = map[string]any{}

// snapshotInto sets dst, a field of a snapshot, to what copyInto would
// give for comparing: an empty (not nil) map[string]any is the shared
// emptySnapshotMap, which equal finds equal to any other empty map.
func (fi *fieldInfo) snapshotInto(dst, src reflect.Value) {
	if fi.class == clsMapAny && !src.IsNil() && src.Len() == 0 {
		dst.Set(reflect.ValueOf(emptySnapshotMap))
		return
	}
	fi.copyInto(dst, src)
}

// MarkChanged marks fields of obj as changed, checking their names.
func (r *Registry) MarkChanged(obj Object, fields ...string) error {
	kd, err := r.kindOf(obj)
	if err != nil {
		return err
	}
	for _, f := range fields {
		if _, err := kd.field(f); err != nil {
			return err
		}
	}
	obj.Changes().Mark(fields...)
	return nil
}
