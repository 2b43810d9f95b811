package objects

import (
	"encoding/json"
	"reflect"
	"time"
)

// Typed fast paths for the per-field work of copying and comparing. Each
// gives exactly the result of the generic path it replaces (deepCopy,
// reflect.DeepEqual), and falls back to that path for anything it does not
// handle; fast_test.go checks both against each other. Encoding and
// decoding are encoding/json's (wire.go).

// fieldClass is the shape of a field's Go type, chosen once at Register.
type fieldClass uint8

const (
	clsOther  fieldClass = iota // anything else: generic reflection
	clsString                   // string
	clsInt                      // int, int8 … int64
	clsBool                     // bool
	clsTime                     // time.Time
	clsPtr                      // *string, *int64 …, *bool, *time.Time
	clsMapAny                   // map[string]any
)

var mapAnyType = reflect.TypeFor[map[string]any]()

// classOf returns the class of a field of type t; only unnamed basic types
// qualify, so a type with its own JSON methods never takes a fast path.
func classOf(t reflect.Type) fieldClass {
	switch {
	case t == timeType:
		return clsTime
	case t == mapAnyType:
		return clsMapAny
	case t.Kind() == reflect.Pointer:
		if e := classOf(t.Elem()); e == clsString || e == clsInt || e == clsBool || e == clsTime {
			return clsPtr
		}
		return clsOther
	case t.PkgPath() != "" || t.Name() != t.Kind().String():
		return clsOther // a named type
	}
	switch t.Kind() {
	case reflect.String:
		return clsString
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return clsInt
	case reflect.Bool:
		return clsBool
	}
	return clsOther
}

// copyInto sets dst to a deep copy of src: dst.Set(deepCopy(src)).
func (fi *fieldInfo) copyInto(dst, src reflect.Value) {
	switch fi.class {
	case clsString, clsInt, clsBool, clsTime:
		dst.Set(src)
	case clsPtr:
		if src.IsNil() {
			dst.SetZero()
			return
		}
		p := reflect.New(fi.typ.Elem())
		p.Elem().Set(src.Elem())
		dst.Set(p)
	case clsMapAny:
		m := src.Interface().(map[string]any)
		if m == nil {
			dst.SetZero()
			return
		}
		dst.Set(reflect.ValueOf(copyMapAny(m)))
	default:
		dst.Set(deepCopy(src))
	}
}

func copyMapAny(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = copyAny(v)
	}
	return out
}

// copyAny is deepCopy of an interface value.
func copyAny(v any) any {
	switch x := v.(type) {
	case nil, string, bool, float64, json.Number, int, int64:
		return v
	case map[string]any:
		if x == nil {
			return x
		}
		return copyMapAny(x)
	case []any:
		if x == nil {
			return x
		}
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = copyAny(e)
		}
		return out
	}
	return deepCopy(reflect.ValueOf(v)).Interface()
}

// equal reports reflect.DeepEqual(a.Interface(), b.Interface()) for two
// values of the field's type.
func (fi *fieldInfo) equal(a, b reflect.Value) bool {
	switch fi.class {
	case clsString:
		return a.String() == b.String()
	case clsInt:
		return a.Int() == b.Int()
	case clsBool:
		return a.Bool() == b.Bool()
	case clsTime:
		return timeEqual(a, b)
	case clsPtr:
		an, bn := a.IsNil(), b.IsNil()
		switch {
		case an || bn:
			return an == bn
		case a.Pointer() == b.Pointer():
			return true
		}
		a, b = a.Elem(), b.Elem()
		switch a.Kind() {
		case reflect.String:
			return a.String() == b.String()
		case reflect.Bool:
			return a.Bool() == b.Bool()
		case reflect.Struct:
			return timeEqual(a, b)
		}
		return a.Int() == b.Int()
	case clsMapAny:
		an, bn := a.IsNil(), b.IsNil()
		switch {
		case an != bn || a.Len() != b.Len():
			return false
		case a.Len() == 0 || a.Pointer() == b.Pointer():
			return true
		}
	}
	return reflect.DeepEqual(a.Interface(), b.Interface())
}

// timeEqual compares two time.Time values as reflect.DeepEqual does: the
// same wall, ext and location (identical, or deeply equal).
func timeEqual(a, b reflect.Value) bool {
	if a.CanAddr() && b.CanAddr() {
		ta, tb := (*time.Time)(a.Addr().UnsafePointer()), (*time.Time)(b.Addr().UnsafePointer())
		if *ta == *tb {
			return true
		}
	}
	return reflect.DeepEqual(a.Interface(), b.Interface())
}
