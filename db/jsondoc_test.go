package db

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// decodeSlow is scanJSON's encoding/json reading of a JSON object column.
func decodeSlow(b []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var m map[string]any
	err := dec.Decode(&m)
	return m, err
}

var documentSeeds = []string{
	`{}`, ` { } `, `{"a":1}`, `{"a":{"b":[1,2.5,-0,1e10,1E-5,"x",true,false,null,{}]}}`,
	`{"ipmi_address":"10.0.0.7","ipmi_password":"secret","port":623}`, `{"a":1,"a":2}`,
	`{"ü":"ünïcode ☃ 😀"}`, `{"esc":"a\"b"}`, `{"u":"\u00e9"}`, `{"bad":"` + "\xff" + `"}`,
	`{"a":01}`, `{"a":1.}`, `{"a":-}`, `{"a":.5}`, `{"a":1e}`, `{"a":tru}`, `{"a":nul}`, `{"a":1,}`,
	`{"a":[1,]}`, `{,}`, `{"a" 1}`, `{"a":1} x`, `{"a":1}{}`, `{"a":1}  ` + "\n", `[1]`, `"s"`, `1`, `null`,
	`{"ctl":"a` + "\x01" + `b"}`, `{"big":123456789012345678901234567890}`, `{"a":[[[[[]]]]]}`,
	`{"l":[{"x":{"y":[null]}}],"m":{}}`, "{\t\"a\"\r\n:\n1 }",
	`{"deep":` + strings.Repeat(`[`, 70) + strings.Repeat(`]`, 70) + `}`,
	`{"deep":` + strings.Repeat(`[`, 60) + strings.Repeat(`]`, 60) + `}`,
}

// TestDecodeObject: the fast reading decodes the common documents, and
// agrees with encoding/json wherever it does (FuzzDecodeObject explores).
func TestDecodeObject(t *testing.T) {
	for _, doc := range documentSeeds {
		checkDecodeObject(t, doc)
	}
	for _, doc := range []string{`{}`, `{"a":{"b":[1,2.5,-0,1e10,"x",true,false,null,{}]}}`, `{"ü":"ünïcode ☃ 😀"}`,
		`{"a":1,"a":2}`, `{"a":1}  ` + "\n", `{"deep":` + strings.Repeat(`[`, 60) + strings.Repeat(`]`, 60) + `}`} {
		if _, ok := decodeObject([]byte(doc)); !ok {
			t.Errorf("%s: left to encoding/json", doc)
		}
	}
	for _, doc := range []string{`{"esc":"a\"b"}`, `{"a":01}`, `{"a":1} x`, `[1]`, `{"bad":"` + "\xff" + `"}`,
		`{"deep":` + strings.Repeat(`[`, 70) + strings.Repeat(`]`, 70) + `}`} {
		if _, ok := decodeObject([]byte(doc)); ok {
			t.Errorf("%s: decoded, should be left to encoding/json", doc)
		}
	}
}

func checkDecodeObject(t *testing.T, doc string) {
	t.Helper()
	got, ok := decodeObject([]byte(doc))
	if !ok {
		return
	}
	want, err := decodeSlow([]byte(doc))
	if err != nil {
		t.Fatalf("%q: decoded fast, encoding/json says %v", doc, err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%q:\nfast %#v\nslow %#v", doc, got, want)
	}
}

// FuzzDecodeObject holds decodeObject to encoding/json on any input.
func FuzzDecodeObject(f *testing.F) {
	for _, doc := range documentSeeds {
		f.Add(doc)
	}
	f.Fuzz(func(t *testing.T, doc string) { checkDecodeObject(t, doc) })
}
