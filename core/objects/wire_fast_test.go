package objects

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/rivetmetal/rivet/core/internal/fuzzcorpus"
	"github.com/rivetmetal/rivet/core/version"
)

// ParsePrimitive's fast path (splitPrimitive) must give exactly what
// json.Unmarshal gives: parsePrimitiveStd is ParsePrimitive before it,
// kept verbatim as the reference for the tests, the fuzz target and the
// benchmark.

// parsePrimitiveStd is ParsePrimitive before its fast path.
func parsePrimitiveStd(b []byte) (Primitive, error) {
	var raw struct {
		Name    *string                    `json:"rivet_object.name"`
		Version *string                    `json:"rivet_object.version"`
		Data    map[string]json.RawMessage `json:"rivet_object.data"`
		Changes []string                   `json:"rivet_object.changes"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return Primitive{}, &MalformedError{Err: err}
	}
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

// primitiveCases are primitives that stress what encoding/json does
// quietly: escapes, whitespace, case-insensitive and unknown keys (which
// it matches or ignores), repeated keys (whose values it merges), null and
// missing members, invalid UTF-8 (which it replaces), HTML characters.
var primitiveCases = []string{
	`{"rivet_object.name":"Node","rivet_object.version":"1.0","rivet_object.data":{"uuid":"u","extra":{"a":[1,{"b":null}]}},"rivet_object.changes":["extra"]}`,
	`{"rivet_object.name":"Node","rivet_object.version":"1.0","rivet_object.data":{}}`,
	" \n{ \"rivet_object.name\" : \"Node\" ,\t\"rivet_object.version\" : \"1.0\" , \"rivet_object.data\" : { \"a\" : [ 1 , 2 ] , \"b\" : { } } , \"rivet_object.changes\" : [ \"a\" , \"b\" ] }\r\n",
	`{"rivet_object.name":"Node","rivet_object.version":"1.0","rivet_object.data":{},"rivet_object.changes":[]}`,
	`{"rivet_object.name":"Node","rivet_object.version":"1.0","rivet_object.data":{},"rivet_object.changes":[ ]}`,
	`{"rivet_object.name":"Node","rivet_object.version":"1.0","rivet_object.data":{},"rivet_object.changes":null}`,
	`{"rivet_object.name":"Node","rivet_object.version":"1.0","rivet_object.data":{},"rivet_object.changes":[null]}`,
	`{"rivet_object.name":"Node","rivet_object.version":"1.0","rivet_object.data":{},"rivet_object.changes":["a",1]}`,
	`{"rivet_object.name":"Node","rivet_object.version":"1.0","rivet_object.data":{},"rivet_object.changes":["a\"b"]}`,
	`{"rivet_object.name":"Node","rivet_object.version":"1.0","rivet_object.data":{},"rivet_object.changes":"a"}`,
	`{"rivet_object.name":"Node","rivet_object.version":"1.0","rivet_object.data":{},"rivet_object.changes":["a"],"rivet_object.changes":null}`,
	`{"rivet_object.name":"Node","rivet_object.version":"1.0","rivet_object.data":{},"rivet_object.changes":null,"rivet_object.changes":["a"]}`,
	`{"rivet_object.name":"Node","rivet_object.version":"1.0","rivet_object.data":null}`,
	`{"rivet_object.name":"Node","rivet_object.version":"1.0"}`,
	`{"rivet_object.name":"Node","rivet_object.version":"1.0","rivet_object.data":[]}`,
	`{"rivet_object.name":"Node","rivet_object.version":"1.0","rivet_object.data":"x"}`,
	`{"rivet_object.name":"Node","rivet_object.version":"1.0","rivet_object.data":{"a":1,"a":2}}`,
	`{"rivet_object.name":"Node","rivet_object.version":"1.0","rivet_object.data":{"a":1,"\u0061":2}}`,
	`{"rivet_object.name":"Node","rivet_object.version":"1.0","rivet_object.data":{"a":1},"rivet_object.data":{"b":2}}`,
	`{"rivet_object.name":"Node","rivet_object.version":"1.0","rivet_object.data":{"a":1},"rivet_object.data":null}`,
	`{"rivet_object.name":"Node","rivet_object.version":"1.0","rivet_object.data":{"a":1},"RIVET_OBJECT.DATA":{"b":2}}`,
	`{"rivet_object.name":"Node","rivet_object.name":"Port","rivet_object.version":"1.0","rivet_object.data":{}}`,
	`{"rivet_object.name":"Node","rivet_object.version":"1.0","rivet_object.version":"1.1","rivet_object.data":{}}`,
	`{"Rivet_Object.Name":"Node","rivet_object.version":"1.0","rivet_object.data":{}}`,
	`{"rivet_object.name":"Node","rivet_object.version":"1.0","rivet_object.data":{},"rivet_object.namespace":"x"}`,
	`{"rivet_object.name":"Node","rivet_object.version":"1.0","rivet_object.data":{},"rivet_object.nam\u0065":"Port"}`,
	`{"rivet_object.name":"No\u0064e","rivet_object.version":"1\u002e0","rivet_object.data":{}}`,
	`{"rivet_object.name":"","rivet_object.version":"1.0","rivet_object.data":{}}`,
	`{"rivet_object.name":null,"rivet_object.version":"1.0","rivet_object.data":{}}`,
	`{"rivet_object.name":"Node","rivet_object.version":null,"rivet_object.data":{}}`,
	`{"rivet_object.name":"Node","rivet_object.data":{}}`,
	`{"rivet_object.version":"1.0","rivet_object.data":{}}`,
	`{"rivet_object.name":5,"rivet_object.version":"1.0","rivet_object.data":{}}`,
	`{"rivet_object.name":"Node","rivet_object.version":1.0,"rivet_object.data":{}}`,
	`{"rivet_object.name":"Node","rivet_object.version":"01.0","rivet_object.data":{}}`,
	`{"rivet_object.name":"Node","rivet_object.version":"x","rivet_object.data":{}}`,
	`{"rivet_object.name":"Node","rivet_object.version":"","rivet_object.data":{}}`,
	"{\"rivet_object.name\":\"No\xffde\",\"rivet_object.version\":\"1.0\",\"rivet_object.data\":{\"\xff\":\"\xff\"}}",
	"{\"rivet_object.name\":\"Node\",\"rivet_object.version\":\"1.0\",\"rivet_object.data\":{\"a\":\"\xff\"},\"rivet_object.changes\":[\"\xfe\"]}",
	"{\"rivet_object.name\":\"Nöde\u2028\",\"rivet_object.version\":\"1.0\",\"rivet_object.data\":{\"ключ\":\"<&>\u2029\"}}",
	`{"rivet_object.name":"<Node>&","rivet_object.version":"1.0","rivet_object.data":{"<":">"}}`,
	`{"rivet_object.name":"Node","rivet_object.version":"1.0","rivet_object.data":{"a":1}} x`,
	`{"rivet_object.name":"Node","rivet_object.version":"1.0","rivet_object.data":{"a":1}`,
	`{"rivet_object.name":"Node","rivet_object.version":"1.0","rivet_object.data":{"a":}}`,
	`null`, `{}`, `[]`, `"x"`, `1`, ``, ` `,
}

// goldenPrimitives are the committed wire fixtures, as written (indented)
// and compacted as they travel.
func goldenPrimitives(t testing.TB) [][]byte {
	t.Helper()
	paths, _ := filepath.Glob(filepath.Join("testdata", "*", "*.json"))
	if len(paths) == 0 {
		t.Fatal("no golden primitives")
	}
	var out [][]byte
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var compact bytes.Buffer
		if err := json.Compact(&compact, b); err != nil {
			t.Fatal(err)
		}
		out = append(out, b, compact.Bytes())
	}
	return out
}

func primitiveSeeds(t testing.TB) [][]byte {
	var seeds [][]byte
	for _, s := range primitiveCases {
		seeds = append(seeds, []byte(s))
	}
	seeds = append(seeds, goldenPrimitives(t)...)
	return append(seeds, fuzzcorpus.Bytes(t, filepath.Join("testdata", "fuzz", "FuzzDeserialize"))...)
}

// checkParsePrimitive fails t when ParsePrimitive and parsePrimitiveStd
// read b differently: another primitive, or another error (type, kind,
// message).
func checkParsePrimitive(t *testing.T, b []byte) {
	t.Helper()
	// Each gets its own copy: neither may depend on what the other does.
	fast, fastErr := ParsePrimitive(bytes.Clone(b))
	slow, slowErr := parsePrimitiveStd(bytes.Clone(b))
	if !reflect.DeepEqual(fast, slow) || !sameError(fastErr, slowErr) {
		t.Fatalf("ParsePrimitive(%q)\nfast: %s %v\nslow: %s %v", b, dumpPrimitive(fast), fastErr, dumpPrimitive(slow), slowErr)
	}
	// Decode's reading, which takes names from the registry, reads the same.
	interned, internedErr := parsePrimitive(bytes.Clone(b), parseRegistry)
	if !reflect.DeepEqual(interned, slow) || !sameError(internedErr, slowErr) {
		t.Fatalf("parsePrimitive(%q, registry)\nfast: %s %v\nslow: %s %v", b, dumpPrimitive(interned), internedErr, dumpPrimitive(slow), slowErr)
	}
	// A value taken from b by the fast path cannot grow into it.
	if raw, ok := splitPrimitive(b, nil); ok {
		for k, v := range raw.Data {
			if cap(v) != len(v) {
				t.Fatalf("ParsePrimitive(%q): data %s can grow into the input", b, k)
			}
		}
	}
}

// parseRegistry holds the kinds Install registers, and one whose name is
// not plain (which kindNamed must not take for the literal's bytes).
var parseRegistry = func() *Registry {
	r := NewRegistry()
	if err := Install(r); err != nil {
		panic(err)
	}
	r.kinds[`No\u0064e`] = r.kinds["Node"]
	return r
}()

func sameError(a, b error) bool {
	if a == nil || b == nil {
		return a == b
	}
	var ma, mb *MalformedError
	if errors.As(a, &ma) != errors.As(b, &mb) || ma != nil && ma.Kind != mb.Kind {
		return false
	}
	return fmt.Sprintf("%T %v", a, a) == fmt.Sprintf("%T %v", b, b)
}

func dumpPrimitive(p Primitive) string {
	data := map[string]string{}
	for k, v := range p.Data {
		data[k] = string(v)
	}
	if p.Data == nil {
		data = nil
	}
	return fmt.Sprintf("{Name:%q Version:%v Data:%q (nil %v) Changes:%q (nil %v)}", p.Name, p.Version, data, p.Data == nil, p.Changes, p.Changes == nil)
}

func TestParsePrimitiveFastMatchesStd(t *testing.T) {
	for _, b := range primitiveSeeds(t) {
		checkParsePrimitive(t, b)
	}
}

// The golden primitives, and what Encode writes, take the fast path (a
// fast path that always fell back would pass the test above).
func TestParsePrimitiveTakesFastPath(t *testing.T) {
	inputs := goldenPrimitives(t)
	r := benchRegistry2(t)
	for _, name := range []string{"Node", "Port", "Chassis"} {
		obj := loadedSample(r, name)
		b, err := r.Encode(obj, version.MustParse("1.0"))
		if err != nil {
			t.Fatal(err)
		}
		inputs = append(inputs, b)
	}
	for _, b := range inputs {
		if _, ok := splitPrimitive(b, nil); !ok {
			t.Fatalf("splitPrimitive(%.80q…) fell back", b)
		}
	}
}

func FuzzParsePrimitiveFast(f *testing.F) {
	for _, s := range primitiveSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(checkParsePrimitive)
}
