package objects

import (
	"fmt"
	"reflect"
	"regexp"

	"github.com/rivetmetal/rivet/core/version"
)

// Field declares one field of a kind, once. The declaration drives
// conversions, API field hiding and the fingerprint.
type Field struct {
	// Name is the canonical snake_case name: the DB column name, the wire
	// data key and the struct tag `rivet:"<Name>"`.
	Name string
	// Since is the version the field appeared in.
	Since version.Version
	// Default is the value a field takes when a version lacks it. It must
	// have the field's Go type; nil means the zero value, and is the only
	// choice for a nullable field. A non-nullable map or slice needs a
	// non-nil default (an empty map, never nil).
	Default any
	// Nullable fields are pointers in Go and NULL-able columns; nothing else
	// may be nil on the wire.
	Nullable bool
}

var fieldName = regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)

// fieldInfo is a Field bound to its place in the kind's struct.
type fieldInfo struct {
	Field
	index []int
	typ   reflect.Type
	def   reflect.Value // the default, of type typ
	class fieldClass    // typ's shape, for the fast paths (fast.go)
}

// bind checks f against the struct field of type t and fills in the rest.
func bind(f Field, index []int, t reflect.Type) (*fieldInfo, error) {
	fi := &fieldInfo{Field: f, index: index, typ: t, class: classOf(t)}
	isPtr := t.Kind() == reflect.Pointer
	switch {
	case f.Nullable && !isPtr:
		return nil, fmt.Errorf("field %s is nullable but its Go type %s is not a pointer", f.Name, t)
	case !f.Nullable && isPtr:
		return nil, fmt.Errorf("field %s has pointer type %s but is not nullable", f.Name, t)
	case f.Nullable && f.Default != nil:
		return nil, fmt.Errorf("field %s is nullable; its default must be nil (NULL)", f.Name)
	}
	if f.Default == nil {
		if !f.Nullable && (t.Kind() == reflect.Map || t.Kind() == reflect.Slice) {
			return nil, fmt.Errorf("field %s (%s) is not nullable and needs a non-nil default", f.Name, t)
		}
		fi.def = reflect.Zero(t)
		return fi, nil
	}
	d := reflect.ValueOf(f.Default)
	if d.Type() != t {
		return nil, fmt.Errorf("field %s: default has type %s, want %s", f.Name, d.Type(), t)
	}
	if (t.Kind() == reflect.Map || t.Kind() == reflect.Slice) && d.IsNil() {
		return nil, fmt.Errorf("field %s (%s) is not nullable and needs a non-nil default", f.Name, t)
	}
	fi.def = d
	return fi, nil
}

// value returns the field of obj (a pointer to the kind's struct).
func (fi *fieldInfo) value(obj Object) reflect.Value {
	return reflect.ValueOf(obj).Elem().FieldByIndex(fi.index)
}

// in returns the field of base, the struct obj points to.
func (fi *fieldInfo) in(base reflect.Value) reflect.Value {
	if len(fi.index) == 1 {
		return base.Field(fi.index[0])
	}
	return base.FieldByIndex(fi.index)
}

// normalized returns the field of base, or the default (never to be
// modified) where the field is a nil map or slice that normalize would
// replace by it.
func (fi *fieldInfo) normalized(base reflect.Value) reflect.Value {
	v := fi.in(base)
	if !fi.Nullable && (v.Kind() == reflect.Map || v.Kind() == reflect.Slice) && v.IsNil() {
		return fi.def
	}
	return v
}

// reset sets the field of obj to a fresh copy of its default.
func (fi *fieldInfo) reset(obj Object) {
	fi.copyInto(fi.value(obj), fi.def)
}

// normalize replaces a nil map or slice in a non-nullable field by its
// default, so that "never nil" holds whatever a caller or a DB row left.
func (fi *fieldInfo) normalize(obj Object) {
	v := fi.value(obj)
	if !fi.Nullable && (v.Kind() == reflect.Map || v.Kind() == reflect.Slice) && v.IsNil() {
		fi.copyInto(v, fi.def)
	}
}

// deepCopy copies maps, slices, pointers and interfaces recursively, so
// that a copy shares no mutable state with its source. nil stays nil.
func deepCopy(v reflect.Value) reflect.Value {
	switch v.Kind() {
	case reflect.Map:
		if v.IsNil() {
			return reflect.Zero(v.Type())
		}
		out := reflect.MakeMapWithSize(v.Type(), v.Len())
		for it := v.MapRange(); it.Next(); {
			out.SetMapIndex(it.Key(), deepCopy(it.Value()))
		}
		return out
	case reflect.Slice:
		if v.IsNil() {
			return reflect.Zero(v.Type())
		}
		out := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
		for i := range v.Len() {
			out.Index(i).Set(deepCopy(v.Index(i)))
		}
		return out
	case reflect.Pointer:
		if v.IsNil() {
			return reflect.Zero(v.Type())
		}
		out := reflect.New(v.Type().Elem())
		out.Elem().Set(deepCopy(v.Elem()))
		return out
	case reflect.Interface:
		if v.IsNil() {
			return reflect.Zero(v.Type())
		}
		out := reflect.New(v.Type()).Elem()
		out.Set(deepCopy(v.Elem()))
		return out
	}
	// Scalars and time.Time (whose *Location is shared and immutable).
	return v
}
