package objects

import (
	"reflect"

	"github.com/rivetmetal/rivet/core/version"
)

// appendLatest appends obj's primitive at the latest version of its kind
// exactly as appendPrimitive(Serialize(obj, target)) writes it, reading
// the fields in name order, the order json.Marshal writes a map's keys in:
// no data map is built and no key sorted (at the latest version nothing is
// converted, so Serialize reads obj itself). false, with nothing to go
// on, for anything else: another target, a value whose encoding fails or
// that appendPrimitive would leave to json.Marshal (the caller then takes
// that path, which gives the same bytes or the same error).
func (kd *kind) appendLatest(buf []byte, obj Object, target version.Version) ([]byte, bool) {
	if target != kd.latest() {
		return buf, false
	}
	var ok bool
	buf = append(buf, `{"rivet_object.name":`...)
	if buf, ok = appendSimpleString(buf, kd.Name); !ok {
		return buf, false
	}
	buf = append(buf, `,"rivet_object.version":`...)
	if buf, ok = appendSimpleString(buf, target.String()); !ok {
		return buf, false
	}
	buf = append(buf, `,"rivet_object.data":{`...)
	base := reflect.ValueOf(obj).Elem()
	first := true
	for _, fi := range kd.sorted {
		if !fi.availableAt(target) {
			continue
		}
		if !first {
			buf = append(buf, ',')
		}
		first = false
		if buf, ok = appendSimpleString(buf, fi.Name); !ok {
			return buf, false
		}
		buf = append(buf, ':')
		start := len(buf)
		var err error
		if buf, err = fi.appendWire(buf, fi.normalized(base)); err != nil || len(buf) == start || !compactSafe(buf[start:]) {
			return buf, false
		}
	}
	buf = append(buf, '}')
	first = true
	for _, f := range kd.changedAs(obj, true) {
		if !kd.byName[f].availableAt(target) {
			continue
		}
		if first {
			buf = append(buf, `,"rivet_object.changes":[`...)
		} else {
			buf = append(buf, ',')
		}
		first = false
		if buf, ok = appendSimpleString(buf, f); !ok {
			return buf, false
		}
	}
	if !first {
		buf = append(buf, ']')
	}
	return append(buf, '}'), true
}
