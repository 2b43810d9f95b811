package objects

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"time"

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
	for _, fi := range kd.fields {
		if !fi.availableAt(target) {
			continue
		}
		b, err := json.Marshal(wireValue(fi.normalized(base)).Interface())
		if err != nil {
			return Primitive{}, fmt.Errorf("objects: %s.%s: %w", kd.Name, fi.Name, err)
		}
		p.Data[fi.Name] = b
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

// Encode is Serialize followed by JSON encoding.
func (r *Registry) Encode(obj Object, target version.Version) ([]byte, error) {
	p, err := r.Serialize(obj, target)
	if err != nil {
		return nil, err
	}
	return json.Marshal(p)
}

// Decode is ParsePrimitive followed by Deserialize.
func (r *Registry) Decode(b []byte, server bool) (Object, error) {
	p, err := ParsePrimitive(b)
	if err != nil {
		return nil, err
	}
	return r.Deserialize(p, server)
}

// ParsePrimitive decodes the JSON of one primitive. Anything but an object
// with a name, a valid version and a data object is a *MalformedError.
func ParsePrimitive(b []byte) (Primitive, error) {
	// A value of an unnamed type, as it always was: encoding/json names
	// the type in its errors ("Go struct field .rivet_object.data"), which
	// reach the peer.
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
	p := reflect.New(fi.typ)
	if fi.class == clsOther || fi.class == clsMapAny {
		// Numbers in maps stay exact, as the DB layer reads them.
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		if err := dec.Decode(p.Interface()); err != nil {
			return err
		}
	} else if err := json.Unmarshal(raw, p.Interface()); err != nil {
		return err // a string, integer, bool or time, no interface inside
	}
	dst.Set(wireValue(p.Elem()))
	return nil
}
