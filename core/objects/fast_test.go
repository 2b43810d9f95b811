package objects

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/rivetmetal/rivet/core/version"
)

// The fast paths (fast.go) must give exactly what the generic paths they
// replace give: these tests run both on the same values, tricky ones
// included, and fail on any difference.

var (
	paris    = time.FixedZone("CET", 3600)
	paris2   = time.FixedZone("CET", 3600) // deeply equal to paris, another pointer
	fastTime = time.Date(2026, 3, 14, 9, 26, 53, 589000000, time.UTC)
)

// fastValues are values of each fast-path type, including those that must
// fall back to the generic path.
func fastValues() map[reflect.Type][]any {
	strs := []string{"", "plain", "with space", `quo"te`, `back\slash`, "<html>&", "tab\t", "ünïcödé", "\u2028", "\x7f", "bad\xffutf8", "2026-01-01T00:00:00Z"}
	ints := []int64{0, 1, -1, 42, math.MaxInt64, math.MinInt64}
	times := []time.Time{{}, fastTime, fastTime.In(paris), fastTime.In(paris2), time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 1, 1, 0, 0, 0, 1, time.Local)}
	out := map[reflect.Type][]any{}
	add := func(vs ...any) {
		for _, v := range vs {
			t := reflect.TypeOf(v)
			out[t] = append(out[t], v)
		}
	}
	for _, s := range strs {
		add(s, &s)
	}
	for _, i := range ints {
		add(i, &i)
	}
	for _, b := range []bool{true, false} {
		add(b, &b)
	}
	for _, t := range times {
		add(t, &t)
	}
	add((*string)(nil), (*int64)(nil), (*bool)(nil), (*time.Time)(nil))
	add(map[string]any(nil), map[string]any{}, map[string]any{"a": "b"}, map[string]any{"a": json.Number("1")},
		map[string]any{"a": 1.5}, map[string]any{"a": nil}, map[string]any{"a": []any{"x", map[string]any{"y": true}}},
		map[string]any{"a": []string{"x"}}, map[string]any{"<": "&"}, map[string]any{"a": map[string]any(nil)}, map[string]any{"a": []any(nil)},
		map[string]any{"n": math.NaN()})
	return out
}

func TestFastCopyEqualEncodeMatchGeneric(t *testing.T) {
	for typ, vals := range fastValues() {
		fi, err := bind(Field{Name: "f", Nullable: typ.Kind() == reflect.Pointer, Default: defaultFor(typ)}, []int{0}, typ)
		if err != nil {
			t.Fatal(err)
		}
		if fi.class == clsOther {
			t.Fatalf("%s takes no fast path", typ)
		}
		for i, a := range vals {
			av := addressable(a)
			// copyInto is deepCopy.
			dst := reflect.New(typ).Elem()
			fi.copyInto(dst, av)
			if want := deepCopy(av); !reflect.DeepEqual(dst.Interface(), want.Interface()) && !hasNaN(a) {
				t.Errorf("%s: copy of %#v = %#v, want %#v", typ, a, dst.Interface(), want.Interface())
			}
			// appendWire is json.Marshal of the wire value.
			want, werr := json.Marshal(wireValue(av).Interface())
			got, gerr := fi.appendWire([]byte("prefix"), av)
			if (werr != nil) != (gerr != nil) || (werr == nil && string(got) != "prefix"+string(want)) {
				t.Errorf("%s %#v: appendWire = %s, %v; json.Marshal = %s, %v", typ, a, got, gerr, want, werr)
			}
			if werr == nil {
				checkDecode(t, fi, want)
			}
			// equal is reflect.DeepEqual.
			for _, b := range vals[i:] {
				bv := addressable(b)
				if got, want := fi.equal(av, bv), reflect.DeepEqual(a, b); got != want {
					t.Errorf("%s: equal(%#v, %#v) = %t, DeepEqual %t", typ, a, b, got, want)
				}
				if got, want := fi.equal(bv, av), reflect.DeepEqual(b, a); got != want {
					t.Errorf("%s: equal(%#v, %#v) = %t, DeepEqual %t", typ, b, a, got, want)
				}
			}
			if cp := dst; !hasNaN(a) && !fi.equal(av, cp) {
				t.Errorf("%s: %#v differs from its copy", typ, a)
			}
		}
	}
}

// TestFastDecodeMatchesGeneric decodes raw values that the fast path takes
// or must refuse, and compares with the generic decoder.
func TestFastDecodeMatchesGeneric(t *testing.T) {
	raws := []string{`""`, `"x"`, `"a b"`, `"\u0041"`, `"\\"`, `"é"`, "\"\x7f\"", `"x" "y"`, `"x`, `x"`, `"`,
		`0`, `-0`, `1`, `-1`, `01`, `1.0`, `1e3`, `9223372036854775807`, `9223372036854775808`, `-9223372036854775808`, `-`, `12345678901234567890`,
		`true`, `false`, `tru`, `null`, ` null `, `{}`, `{ }`, `{"a":1}`, `[]`, `"2026-03-14T09:26:53.589Z"`, `"2026-03-14T10:26:53+01:00"`,
		`"2026-03-14T09:26:53Z"x`, `"2026-03-14 09:26:53Z"`, `"2026-03-14T09:26:53\u005a"`, `"10000-01-01T00:00:00Z"`, ` "x"`, `"x" `, ` 1`}
	for typ := range fastValues() {
		fi, err := bind(Field{Name: "f", Nullable: typ.Kind() == reflect.Pointer, Default: defaultFor(typ)}, []int{0}, typ)
		if err != nil {
			t.Fatal(err)
		}
		for _, raw := range raws {
			checkDecode(t, fi, []byte(raw))
		}
	}
}

// checkDecode compares decodeValue (fast path first) with the generic
// decoder on raw.
func checkDecode(t *testing.T, fi *fieldInfo, raw []byte) {
	t.Helper()
	got, want := reflect.New(fi.typ).Elem(), reflect.New(fi.typ).Elem()
	gerr := decodeValue(fi, got, raw)
	werr := decodeGeneric(fi, want, raw)
	if fmt.Sprint(gerr) != fmt.Sprint(werr) {
		t.Errorf("%s %s: error %v, generic %v", fi.typ, raw, gerr, werr)
		return
	}
	if !reflect.DeepEqual(got.Interface(), want.Interface()) {
		t.Errorf("%s %s: decoded %#v, generic %#v", fi.typ, raw, got.Interface(), want.Interface())
	}
}

// decodeGeneric is decodeValue without the fast path.
func decodeGeneric(fi *fieldInfo, dst reflect.Value, raw json.RawMessage) error {
	if bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		if !fi.Nullable {
			return fmt.Errorf("null for a field that is not nullable")
		}
		dst.SetZero()
		return nil
	}
	p := reflect.New(fi.typ)
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(p.Interface()); err != nil {
		return err
	}
	dst.Set(wireValue(p.Elem()))
	return nil
}

func defaultFor(t reflect.Type) any {
	if t == mapAnyType {
		return map[string]any{}
	}
	return nil
}

func addressable(v any) reflect.Value {
	p := reflect.New(reflect.TypeOf(v))
	p.Elem().Set(reflect.ValueOf(v))
	return p.Elem()
}

func hasNaN(v any) bool { return fmt.Sprint(v) == "map[n:NaN]" }

// TestEncodeMatchesMarshal checks that Encode writes exactly
// json.Marshal(Serialize(…)) for every sample and test kind at every
// version, and for nodes with values that need escaping.
func TestEncodeMatchesMarshal(t *testing.T) {
	for _, r := range []*Registry{benchRegistry2(t), testRegistry(t)} {
		for _, kind := range r.Kinds() {
			mk, ok := samples()[kind]
			if !ok {
				mk = func() Object { o, _ := r.New(kind); return o }
			}
			kd, _ := r.lookup(kind)
			for _, v := range kd.versions {
				for _, obj := range []Object{mk(), loadedSample2(r, mk)} {
					checkEncode(t, r, obj, v)
				}
			}
		}
	}
	r := benchRegistry2(t)
	n := samples()["Node"]().(*Node)
	n.Name = ptr("<script>&\u2028")
	n.Extra = map[string]any{"a<b": "c&d", "x": []any{json.Number("1"), "\u2029"}}
	n.DriverInfo = nil // normalized to {}
	checkEncode(t, r, n, version.MustParse("1.1"))
	checkEncode(t, r, n, version.MustParse("1.0"))
}

func checkEncode(t *testing.T, r *Registry, obj Object, ver version.Version) {
	t.Helper()
	got, err := r.Encode(obj, ver)
	if err != nil {
		t.Fatal(err)
	}
	p, err := r.Serialize(obj, ver)
	if err != nil {
		t.Fatal(err)
	}
	want, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s at %s: Encode\n%s\njson.Marshal\n%s", obj.Kind(), ver, got, want)
	}
	// And Serialize reads obj as a converted copy would hold it.
	ref, err := serializeViaCopy(r, obj, ver)
	if err != nil {
		t.Fatal(err)
	}
	if !cmp.Equal(p, ref) {
		t.Errorf("%s at %s: Serialize %v, via a copy %v", obj.Kind(), ver, p, ref)
	}
}

// serializeViaCopy is the generic Serialize: convert a copy, marshal each
// field with encoding/json, compare with reflect.DeepEqual.
func serializeViaCopy(r *Registry, obj Object, target version.Version) (Primitive, error) {
	kd, err := r.kindOf(obj)
	if err != nil {
		return Primitive{}, err
	}
	out := kd.copy(obj)
	marked, err := kd.convert(out, kd.latest(), target, true)
	if err != nil {
		return Primitive{}, err
	}
	out.Changes().mark(marked)
	p := Primitive{Name: kd.Name, Version: target, Data: map[string]json.RawMessage{}}
	for _, fi := range kd.fields {
		if fi.availableAt(target) {
			b, err := json.Marshal(wireValue(fi.value(out)).Interface())
			if err != nil {
				return Primitive{}, err
			}
			p.Data[fi.Name] = b
		}
	}
	for _, f := range changedGeneric(kd, out) {
		if kd.byName[f].availableAt(target) {
			p.Changes = append(p.Changes, f)
		}
	}
	return p, nil
}

// changedGeneric is changed with reflect.DeepEqual against the snapshot.
func changedGeneric(kd *kind, obj Object) []string {
	cs := obj.Changes()
	var out []string
	for _, fi := range kd.fields {
		if cs.snapshot == nil || cs.marked[fi.Name] ||
			!reflect.DeepEqual(fi.value(cs.snapshot).Interface(), fi.value(obj).Interface()) {
			out = append(out, fi.Name)
		}
	}
	slices.Sort(out)
	return out
}

// TestChangedMatchesDeepEqual mutates a loaded node field by field in ways
// that do and do not change its value and compares Changed with
// reflect.DeepEqual against the snapshot.
func TestChangedMatchesDeepEqual(t *testing.T) {
	r := benchRegistry2(t)
	kd, _ := r.lookup("Node")
	mutations := []func(n *Node){
		func(n *Node) {},
		func(n *Node) { n.Name = ptr(*n.Name) },               // same value, new pointer
		func(n *Node) { n.Name = ptr(*n.Name + "x") },         // new value
		func(n *Node) { *n.Name = "changed in place" },        // in place: the snapshot is a deep copy
		func(n *Node) { n.ChassisID = nil },                   // to NULL
		func(n *Node) { n.CreatedAt = n.CreatedAt.In(paris) }, // same instant, other zone: changed, as DeepEqual says
		func(n *Node) { u := n.UpdatedAt.In(time.UTC); n.UpdatedAt = &u },
		func(n *Node) { n.Extra["rack"] = "r2" }, // nested, in place
		func(n *Node) { n.Extra = map[string]any{"rack": "r1", "slot": json.Number("7")} },
		func(n *Node) { n.Extra = nil }, // nil vs {}: changed
		func(n *Node) { n.Properties["cpus"] = json.Number("32") },
		func(n *Node) { n.Maintenance = !n.Maintenance },
		func(n *Node) { n.ID++ },
		func(n *Node) {
			n.RAIDConfig["logical_disks"].([]any)[0].(map[string]any)["size_gb"] = json.Number("200")
		},
	}
	for i, mut := range mutations {
		n := samples()["Node"]().(*Node)
		if err := r.ResetChanges(n); err != nil {
			t.Fatal(err)
		}
		mut(n)
		got, _ := r.Changed(n)
		if want := changedGeneric(kd, n); !slices.Equal(got, want) {
			t.Errorf("mutation %d: Changed %v, DeepEqual %v", i, got, want)
		}
		c, _ := r.Copy(n)
		got, _ = r.Changed(c)
		if want := changedGeneric(kd, c); !slices.Equal(got, want) {
			t.Errorf("mutation %d, copy: Changed %v, DeepEqual %v", i, got, want)
		}
	}
}

func benchRegistry2(t testing.TB) *Registry {
	t.Helper()
	r := NewRegistry()
	if err := Install(r); err != nil {
		t.Fatal(err)
	}
	return r
}

func loadedSample2(r *Registry, mk func() Object) Object {
	obj := mk()
	if err := r.ResetChanges(obj); err != nil {
		panic(err)
	}
	return obj
}

// FuzzFastPaths checks the fast paths against the generic ones on
// arbitrary input: raw bytes decoded into every fast-path type, and the
// same bytes as a string encoded, compared, and copied.
func FuzzFastPaths(f *testing.F) {
	for _, s := range []string{`"x"`, `12`, `-0`, `true`, `null`, `{}`, `"2026-03-14T09:26:53.589Z"`, `"a\u0041"`, "\"\xff\"", `"<&>"`, `1e3`} {
		f.Add([]byte(s))
	}
	var fis []*fieldInfo
	for typ := range fastValues() {
		fi, err := bind(Field{Name: "f", Nullable: typ.Kind() == reflect.Pointer, Default: defaultFor(typ)}, []int{0}, typ)
		if err != nil {
			f.Fatal(err)
		}
		fis = append(fis, fi)
	}
	str, _ := bind(Field{Name: "s"}, []int{0}, reflect.TypeFor[string]())
	f.Fuzz(func(t *testing.T, raw []byte) {
		for _, fi := range fis {
			checkDecode(t, fi, raw)
		}
		v := addressable(string(raw))
		want, werr := json.Marshal(string(raw))
		got, gerr := str.appendWire(nil, v)
		if werr != nil || gerr != nil || !bytes.Equal(got, want) {
			t.Fatalf("string %q: appendWire %s %v, json.Marshal %s %v", raw, got, gerr, want, werr)
		}
		checkDecode(t, str, want)
	})
}
