package objects

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/rivetmetal/rivet/core/jsonraw"
)

// Typed fast paths for the per-field work of copying, comparing, encoding
// and decoding. Each gives exactly the result of the generic path it
// replaces (deepCopy, reflect.DeepEqual, json.Marshal, a json.Decoder with
// UseNumber), and falls back to that path for anything it does not handle;
// fast_test.go checks both against each other.

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

// appendWire appends the wire encoding of v, a value of the field's type,
// to buf: json.Marshal(wireValue(v).Interface()).
func (fi *fieldInfo) appendWire(buf []byte, v reflect.Value) ([]byte, error) {
	switch fi.class {
	case clsString:
		if b, ok := appendSimpleString(buf, v.String()); ok {
			return b, nil
		}
	case clsInt:
		return strconv.AppendInt(buf, v.Int(), 10), nil
	case clsBool:
		return strconv.AppendBool(buf, v.Bool()), nil
	case clsTime:
		if b, ok := appendTime(buf, v); ok {
			return b, nil
		}
	case clsPtr:
		if v.IsNil() {
			return append(buf, "null"...), nil
		}
		e := v.Elem()
		switch e.Kind() {
		case reflect.String:
			if b, ok := appendSimpleString(buf, e.String()); ok {
				return b, nil
			}
		case reflect.Bool:
			return strconv.AppendBool(buf, e.Bool()), nil
		case reflect.Struct:
			if b, ok := appendTime(buf, e); ok {
				return b, nil
			}
		default:
			return strconv.AppendInt(buf, e.Int(), 10), nil
		}
	case clsMapAny:
		if v.IsNil() {
			return append(buf, "null"...), nil
		}
		if v.Len() == 0 {
			return append(buf, "{}"...), nil
		}
	}
	b, err := json.Marshal(wireValue(v).Interface())
	if err != nil {
		return buf, err
	}
	return append(buf, b...), nil
}

// appendTime appends the JSON of the time.Time v in UTC, as json.Marshal
// writes it (time.Time's MarshalJSON); false when that fails, for the
// caller's json.Marshal to report.
func appendTime(buf []byte, v reflect.Value) ([]byte, bool) {
	var t time.Time
	if v.CanAddr() {
		t = *(*time.Time)(v.Addr().UnsafePointer())
	} else {
		t = v.Interface().(time.Time)
	}
	t = t.UTC()
	if y := t.Year(); y < 0 || y > 9999 {
		return buf, false
	}
	buf = append(buf, '"')
	buf = t.AppendFormat(buf, time.RFC3339Nano)
	return append(buf, '"'), true
}

// appendSimpleString appends s as a JSON string when it needs no escaping
// by encoding/json; false otherwise (jsonraw.AppendPlainString).
func appendSimpleString(buf []byte, s string) ([]byte, bool) {
	return jsonraw.AppendPlainString(buf, s)
}

// decodeFast decodes raw into dst when raw has a shape it can decode
// exactly as decodeValue would; false leaves dst untouched for decodeValue.
func (fi *fieldInfo) decodeFast(dst reflect.Value, raw []byte) bool {
	switch fi.class {
	case clsString, clsInt, clsBool, clsTime:
		return decodeScalar(dst, raw)
	case clsPtr:
		if string(raw) == "null" {
			dst.SetZero()
			return true
		}
		p := reflect.New(fi.typ.Elem())
		if !decodeScalar(p.Elem(), raw) {
			return false
		}
		dst.Set(p)
		return true
	case clsMapAny:
		if string(raw) == "{}" {
			dst.Set(reflect.ValueOf(map[string]any{}))
			return true
		}
	}
	return false
}

// decodeScalar decodes raw into dst, a string, integer, bool or time.Time,
// for the simplest literals: a string of printable ASCII without escapes,
// an integer in canonical form that fits, true or false, and a timestamp
// time.Time's UnmarshalJSON accepts (converted to UTC, as wireValue does).
func decodeScalar(dst reflect.Value, raw []byte) bool {
	switch dst.Kind() {
	case reflect.String:
		n := len(raw)
		if n < 2 || raw[0] != '"' || raw[n-1] != '"' {
			return false
		}
		for _, c := range raw[1 : n-1] {
			if c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
				return false
			}
		}
		dst.SetString(string(raw[1 : n-1]))
		return true
	case reflect.Bool:
		switch string(raw) {
		case "true":
			dst.SetBool(true)
			return true
		case "false":
			dst.SetBool(false)
			return true
		}
		return false
	case reflect.Struct: // time.Time
		if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' || !utf8.Valid(raw) || bytes.IndexByte(raw[1:len(raw)-1], '\\') >= 0 {
			return false
		}
		var t time.Time
		if err := t.UnmarshalJSON(raw); err != nil {
			return false
		}
		dst.Set(reflect.ValueOf(t.UTC()))
		return true
	}
	// Integers: -?(0|[1-9][0-9]*) within the type's range.
	s := raw
	if len(s) > 0 && s[0] == '-' {
		s = s[1:]
	}
	if len(s) == 0 || len(s) > 19 || (s[0] == '0' && len(s) > 1) {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	i, err := strconv.ParseInt(string(raw), 10, dst.Type().Bits())
	if err != nil {
		return false
	}
	dst.SetInt(i)
	return true
}

// appendPrimitive appends the JSON of p exactly as json.Marshal(p) writes
// it, given that p's data values are compact JSON without characters
// encoding/json escapes differently (what Serialize produces); false when
// it cannot vouch for that, for the caller to use json.Marshal.
func appendPrimitive(buf []byte, p Primitive) ([]byte, bool) {
	var ok bool
	buf = append(buf, `{"rivet_object.name":`...)
	if buf, ok = appendSimpleString(buf, p.Name); !ok {
		return buf, false
	}
	buf = append(buf, `,"rivet_object.version":`...)
	if buf, ok = appendSimpleString(buf, p.Version.String()); !ok {
		return buf, false
	}
	buf = append(buf, `,"rivet_object.data":`...)
	if p.Data == nil {
		buf = append(buf, "null"...)
	} else {
		keys := make([]string, 0, len(p.Data))
		for k := range p.Data {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		buf = append(buf, '{')
		for i, k := range keys {
			if i > 0 {
				buf = append(buf, ',')
			}
			if buf, ok = appendSimpleString(buf, k); !ok {
				return buf, false
			}
			buf = append(buf, ':')
			v := p.Data[k]
			if len(v) == 0 || !compactSafe(v) {
				return buf, false
			}
			buf = append(buf, v...)
		}
		buf = append(buf, '}')
	}
	if len(p.Changes) > 0 {
		buf = append(buf, `,"rivet_object.changes":[`...)
		for i, c := range p.Changes {
			if i > 0 {
				buf = append(buf, ',')
			}
			if buf, ok = appendSimpleString(buf, c); !ok {
				return buf, false
			}
		}
		buf = append(buf, ']')
	}
	return append(buf, '}'), true
}

// compactSafe reports whether json.Marshal would copy the raw value v as
// it is (jsonraw.MarshalsVerbatim).
func compactSafe(v []byte) bool { return jsonraw.MarshalsVerbatim(v) }
