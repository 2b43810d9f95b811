package objects

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"time"

	"github.com/rivetmetal/rivet/core/jsonraw"
	"github.com/rivetmetal/rivet/core/version"
)

// Primitive is an object on the wire, mirroring oslo.versionedobjects:
//
//	{"rivet_object.name": "Node", "rivet_object.version": "1.0",
//	 "rivet_object.data": {...}, "rivet_object.changes": [...]}
//
// Data holds exactly the fields available at Version, each encoded with
// encoding/json (timestamps as RFC 3339 in UTC; numbers inside map fields
// decode as json.Number, exactly as the DB layer reads them). Changes lists the changed fields and is omitted when
// empty.
type Primitive struct {
	Name    string                     `json:"rivet_object.name"`
	Version version.Version            `json:"rivet_object.version"`
	Data    map[string]json.RawMessage `json:"rivet_object.data"`
	Changes []string                   `json:"rivet_object.changes,omitempty"`
}

// Serialize converts a copy of obj to target with
// remove_unavailable_fields=true and returns its primitive. Fields target
// lacks are not sent; changes are obj's plus the conversion's, limited to
// the fields sent, so the receiver can save what the conversion moved
// (seed: sending while pinned). obj is untouched. A target newer than the
// latest, or otherwise not convertible, is an *IncompatibleVersionError.
func (r *Registry) Serialize(obj Object, target version.Version) (Primitive, error) {
	kd, err := r.kindOf(obj)
	if err != nil {
		return Primitive{}, err
	}
	if err := kd.check(target); err != nil {
		return Primitive{}, err
	}
	// At the latest version nothing is converted, so obj itself is read
	// (as the copy would hold it: normalized); otherwise a copy is
	// converted.
	src, normalized := obj, true
	if target != kd.latest() {
		out := kd.copy(obj)
		marked, err := kd.convert(out, kd.latest(), target, true)
		if err != nil {
			return Primitive{}, err
		}
		out.Changes().mark(marked)
		src, normalized = out, false
	}
	base := reflect.ValueOf(src).Elem()
	p := Primitive{Name: kd.Name, Version: target, Data: make(map[string]json.RawMessage, len(kd.fields))}
	buf := make([]byte, 0, 64*len(kd.fields))
	for _, fi := range kd.fields {
		if !fi.availableAt(target) {
			continue
		}
		start := len(buf)
		var err error
		if buf, err = fi.appendWire(buf, fi.normalized(base)); err != nil {
			return Primitive{}, fmt.Errorf("objects: %s.%s: %w", kd.Name, fi.Name, err)
		}
		p.Data[fi.Name] = buf[start:len(buf):len(buf)]
	}
	for _, f := range kd.changedAs(src, normalized) {
		if kd.byName[f].availableAt(target) {
			p.Changes = append(p.Changes, f)
		}
	}
	return p, nil
}

// Deserialize builds an object from p and converts it to the latest
// version (Ironic's _process_object). A server (the conductor) converts
// with remove_unavailable_fields=false and keeps p's changes plus the
// conversion's, for a later DB save. A client (the API) converts with
// true, which, as in Ironic, drops all changes when p was not at the
// latest version (at the latest nothing is converted and p's changes stay).
//
// Errors: *UnknownKindError, *IncompatibleVersionError (other major, newer
// than latest, older than the oldest known), *UnknownFieldError (a data or
// changes key that is not a field at p.Version: the sender did not
// downgrade) and *MalformedError (a value that does not decode).
func (r *Registry) Deserialize(p Primitive, server bool) (Object, error) {
	kd, err := r.lookup(p.Name)
	if err != nil {
		return nil, err
	}
	if err := kd.check(p.Version); err != nil {
		return nil, err
	}
	obj, err := kd.fromData(p)
	if err != nil {
		return nil, err
	}
	kd.resetChanges(obj)
	if len(p.Changes) > 0 {
		obj.Changes().marked = make(map[string]bool, len(p.Changes))
	}
	for _, f := range p.Changes {
		fi, ok := kd.byName[f]
		if !ok || !fi.availableAt(p.Version) {
			return nil, &UnknownFieldError{Kind: kd.Name, Version: p.Version, Field: f}
		}
		obj.Changes().Mark(f)
	}
	marked, err := kd.convert(obj, p.Version, kd.latest(), !server)
	if err != nil {
		return nil, err
	}
	switch {
	case server:
		obj.Changes().mark(marked)
	case p.Version != kd.latest():
		kd.resetChanges(obj)
	}
	return obj, nil
}

// fromData builds an object of kd from p's data: each field p carries
// decoded, the others at their defaults. It walks kd's fields, so no
// field is set to its default only to be replaced, and nothing is sorted;
// data it cannot take whole (a key that is not a field at p.Version, a
// value that does not decode) goes to fromDataSorted, which names the
// first problem in key order, as Deserialize always has.
func (kd *kind) fromData(p Primitive) (Object, error) {
	obj := kd.New()
	base := reflect.ValueOf(obj).Elem()
	taken := 0
	for _, fi := range kd.fields {
		raw, ok := p.Data[fi.Name]
		if !ok {
			fi.copyInto(fi.in(base), fi.def) // fi.reset(obj)
			continue
		}
		if !fi.availableAt(p.Version) || decodeValue(fi, fi.in(base), raw) != nil {
			return kd.fromDataSorted(p)
		}
		taken++
	}
	if taken != len(p.Data) {
		return kd.fromDataSorted(p)
	}
	return obj, nil
}

// fromDataSorted is fromData as Deserialize did it before: defaults, then
// p's data in key order, failing on the first key that is not a field at
// p.Version or whose value does not decode (deterministic errors).
func (kd *kind) fromDataSorted(p Primitive) (Object, error) {
	obj := kd.newDefault()
	base := reflect.ValueOf(obj).Elem()
	keys := make([]string, 0, len(p.Data))
	for k := range p.Data {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		fi, ok := kd.byName[k]
		if !ok || !fi.availableAt(p.Version) {
			return nil, &UnknownFieldError{Kind: kd.Name, Version: p.Version, Field: k}
		}
		if err := decodeValue(fi, fi.in(base), p.Data[k]); err != nil {
			return nil, &MalformedError{Kind: kd.Name, Field: k, Err: err}
		}
	}
	return obj, nil
}

// Encode is Serialize followed by JSON encoding. At the latest version the
// primitive is written straight from obj (appendLatest).
func (r *Registry) Encode(obj Object, target version.Version) ([]byte, error) {
	if kd, err := r.kindOf(obj); err == nil && target == kd.latest() {
		if b, ok := kd.appendLatest(make([]byte, 0, 2048), obj, target); ok {
			return b, nil
		}
	}
	p, err := r.Serialize(obj, target)
	if err != nil {
		return nil, err
	}
	if b, ok := appendPrimitive(make([]byte, 0, 2048), p); ok {
		return b, nil
	}
	return json.Marshal(p)
}

// Decode is ParsePrimitive followed by Deserialize.
func (r *Registry) Decode(b []byte, server bool) (Object, error) {
	p, err := parsePrimitive(b, r)
	if err != nil {
		return nil, err
	}
	return r.Deserialize(p, server)
}

// ParsePrimitive decodes the JSON of one primitive. Anything but an object
// with a name, a valid version and a data object is a *MalformedError.
//
// Every object argument and result of an RPC comes through here, on both
// sides, so the usual primitive is taken apart without encoding/json
// (splitPrimitive) and only an unusual one is decoded by it; both give the
// same fields, which the same checks then judge. The fast path leaves the
// data values in b's memory (json.Unmarshal copied them): b must not change
// while the primitive is in use. Decode's objects keep nothing of b.
func ParsePrimitive(b []byte) (Primitive, error) {
	return parsePrimitive(b, nil)
}

// parsePrimitive is ParsePrimitive. With a registry, the fast path
// returns the kind's own strings for the kind name and for data keys and
// changes that are field names of it (equal strings, not copies of b's
// bytes): a node primitive carries some 40 of each, and a string per key
// was most of its decoding's allocations.
func parsePrimitive(b []byte, r *Registry) (Primitive, error) {
	if raw, ok := splitPrimitive(b, r); ok {
		return raw.check()
	}
	// A fresh value: nothing splitPrimitive read before giving up may
	// survive into what json.Unmarshal reads. It is of an unnamed type, as
	// it always was: encoding/json names the type in its errors ("Go
	// struct field .rivet_object.data"), which reach the peer.
	var raw struct {
		Name    *string                    `json:"rivet_object.name"`
		Version *string                    `json:"rivet_object.version"`
		Data    map[string]json.RawMessage `json:"rivet_object.data"`
		Changes []string                   `json:"rivet_object.changes"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return Primitive{}, &MalformedError{Err: err}
	}
	return rawPrimitive(raw).check()
}

// rawPrimitive is a primitive as decoded, before its checks.
type rawPrimitive struct {
	Name    *string                    `json:"rivet_object.name"`
	Version *string                    `json:"rivet_object.version"`
	Data    map[string]json.RawMessage `json:"rivet_object.data"`
	Changes []string                   `json:"rivet_object.changes"`
}

// check turns a decoded primitive into a Primitive, or says what is missing
// or wrong.
func (raw rawPrimitive) check() (Primitive, error) {
	if raw.Name == nil || *raw.Name == "" {
		return Primitive{}, &MalformedError{Err: errors.New("no rivet_object.name")}
	}
	if raw.Version == nil {
		return Primitive{}, &MalformedError{Kind: *raw.Name, Err: errors.New("no rivet_object.version")}
	}
	v, err := version.Parse(*raw.Version)
	if err != nil {
		return Primitive{}, &MalformedError{Kind: *raw.Name, Err: err}
	}
	if raw.Data == nil {
		return Primitive{}, &MalformedError{Kind: *raw.Name, Err: errors.New("no rivet_object.data object")}
	}
	return Primitive{Name: *raw.Name, Version: v, Data: raw.Data, Changes: raw.Changes}, nil
}

// splitPrimitive reads b as json.Unmarshal would into a rawPrimitive when b
// is the usual primitive: a valid JSON object whose members are the four
// exact keys at most once each, name and version plain strings (no
// escapes, valid UTF-8), data an object of distinct plain keys, changes
// null or an array of plain strings. false for anything else (invalid
// JSON, another or a case-variant key, which encoding/json ignores or
// matches; a repeated key, whose values it merges; null where a value is
// expected; escapes; non-UTF-8, which it replaces), and json.Unmarshal
// decides.
//
// The data values are sub-slices of b, where json.Unmarshal made copies:
// b must not change while the primitive is in use. Its callers decode
// bodies read whole for the one call (io.ReadAll of a JSON-RPC request or
// reply, a parameter of one) and never write to them.
//
// r, when not nil, only supplies the strings of known names (internKey).
func splitPrimitive(b []byte, r *Registry) (rawPrimitive, bool) {
	var raw rawPrimitive
	if !jsonraw.Valid(b) {
		return raw, false
	}
	var buf [8]jsonraw.Member
	members, ok := jsonraw.Members(buf[:0], b)
	if !ok {
		return raw, false
	}
	kd := r.kindNamed(members)
	var seen [4]bool // name, version, data, changes
	for _, m := range members {
		var at int
		switch string(m.Key) {
		case `"rivet_object.name"`:
			at = 0
		case `"rivet_object.version"`:
			at = 1
		case `"rivet_object.data"`:
			at = 2
		case `"rivet_object.changes"`:
			at = 3
		default:
			return raw, false
		}
		if seen[at] {
			return raw, false
		}
		seen[at] = true
		switch at {
		case 0:
			s, ok := jsonraw.Unquote(m.Value)
			if kd != nil {
				s, ok = kd.Name, true // kindNamed matched the literal's bytes
			}
			if !ok {
				return raw, false
			}
			raw.Name = &s
		case 1:
			s, ok := jsonraw.Unquote(m.Value)
			if !ok {
				return raw, false
			}
			raw.Version = &s
		case 2:
			var fields [64]jsonraw.Member
			data, ok := jsonraw.Members(fields[:0], m.Value)
			if !ok {
				return raw, false
			}
			raw.Data = make(map[string]json.RawMessage, len(data))
			for _, f := range data {
				k, ok := kd.internKey(f.Key)
				if !ok {
					return raw, false
				}
				if _, dup := raw.Data[k]; dup {
					return raw, false
				}
				raw.Data[k] = json.RawMessage(f.Value)
			}
		case 3:
			changes, ok := splitStrings(m.Value, kd)
			if !ok {
				return raw, false
			}
			raw.Changes = changes
		}
	}
	return raw, true
}

// splitStrings reads valid JSON, null or an array of plain strings, as
// json.Unmarshal would into a []string (nil for null, empty but not nil for
// []); false for anything else.
//
// Field names of kd (when not nil) are kd's own strings (internKey).
func splitStrings(v []byte, kd *kind) ([]string, bool) {
	if string(v) == "null" {
		return nil, true
	}
	if len(v) < 2 || v[0] != '[' {
		return nil, false
	}
	var out []string
	i := 1
	for {
		for i < len(v) && (v[i] == ' ' || v[i] == '\t' || v[i] == '\n' || v[i] == '\r') {
			i++
		}
		if i < len(v) && v[i] == ']' && len(out) == 0 {
			return []string{}, i == len(v)-1
		}
		if i >= len(v) || v[i] != '"' {
			return nil, false
		}
		j := bytes.IndexByte(v[i+1:], '"')
		if j < 0 {
			return nil, false
		}
		s, ok := kd.internKey(v[i : i+j+2])
		if !ok {
			return nil, false
		}
		if out == nil {
			// One allocation for a node's changes (its 40 field names);
			// capped, as commas inside strings count too.
			out = make([]string, 0, min(bytes.Count(v, []byte{','})+1, 64))
		}
		out = append(out, s)
		for i += j + 2; i < len(v) && (v[i] == ' ' || v[i] == '\t' || v[i] == '\n' || v[i] == '\r'); i++ {
		}
		switch {
		case i < len(v) && v[i] == ',':
			i++
		case i == len(v)-1 && v[i] == ']':
			return out, true
		default:
			return nil, false
		}
	}
}

// kindNamed returns the kind of r whose name a primitive's members carry
// as a plain string literal ("rivet_object.name": "Node"), nil when r is
// nil or there is none.
func (r *Registry) kindNamed(members []jsonraw.Member) *kind {
	if r == nil {
		return nil
	}
	for _, m := range members {
		if string(m.Key) == `"rivet_object.name"` {
			if lit := m.Value; len(lit) >= 2 && lit[0] == '"' && lit[len(lit)-1] == '"' {
				// A map lookup, no copy. Kind names are not checked at
				// Register; only a plain one (what Unquote gives back
				// unchanged) may stand for the literal.
				inner := lit[1 : len(lit)-1]
				if kd := r.kinds[string(inner)]; kd != nil && kd.Name == string(inner) && plainASCII(kd.Name) {
					return kd
				}
			}
			return nil
		}
	}
	return nil
}

// plainASCII reports whether s is printable ASCII without '"' or '\\'.
func plainASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// internKey is jsonraw.Unquote(lit), returning kd's own string when lit
// is a field name of kd between quotes. That is exact: field names are
// plain (no escape, printable ASCII), so such a literal holds exactly the
// bytes between its quotes.
func (kd *kind) internKey(lit []byte) (string, bool) {
	if kd != nil && len(lit) >= 2 && lit[0] == '"' && lit[len(lit)-1] == '"' {
		if fi, ok := kd.byName[string(lit[1:len(lit)-1])]; ok {
			return fi.Name, true
		}
	}
	return jsonraw.Unquote(lit)
}

var timeType = reflect.TypeFor[time.Time]()

// wireValue returns v with timestamps in UTC, so the wire form does not
// depend on the sender's zone.
func wireValue(v reflect.Value) reflect.Value {
	switch {
	case v.Type() == timeType:
		return reflect.ValueOf(v.Interface().(time.Time).UTC())
	case v.Kind() == reflect.Pointer && v.Type().Elem() == timeType && !v.IsNil():
		t := v.Elem().Interface().(time.Time).UTC()
		return reflect.ValueOf(&t)
	}
	return v
}

// decodeValue decodes raw into dst, a field of type fi.typ.
func decodeValue(fi *fieldInfo, dst reflect.Value, raw json.RawMessage) error {
	if bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		if !fi.Nullable {
			return errors.New("null for a field that is not nullable")
		}
		dst.SetZero()
		return nil
	}
	if fi.decodeFast(dst, raw) {
		return nil
	}
	p := reflect.New(fi.typ)
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber() // numbers in maps stay exact, as the DB layer reads them
	if err := dec.Decode(p.Interface()); err != nil {
		return err
	}
	dst.Set(wireValue(p.Elem()))
	return nil
}
