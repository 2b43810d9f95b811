package jsonraw

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// canonicalCases are documents Canonical must judge as encoding/json does;
// want is whether json.Marshal of the decoded map gives them back.
var canonicalCases = map[string]bool{
	`{}`: true,
	`{"a":1,"b":[true,false,null],"c":{"d":"x","e":[]}}`:                true,
	`{"cpu_arch":"x86_64","cpus":32,"local_gb":400,"memory_mb":131072}`: true,
	`{"f":-0.5e+10,"g":1E3,"h":0}`:                                      true,
	`{"z":"日本","é":"ü"}`:                                                true,
	`{"b":1,"a":2}`:                                                     false, // unsorted: Marshal sorts
	`{"a":1,"a":2}`:                                                     false, // repeated key
	`{"a": 1}`:                                                          false, // whitespace
	`{"a":"x<y"}`:                                                       false, // '<' is escaped by Marshal
	`{"a":"\u0041"}`:                                                    false, // an escape (decoded, then written plain)
	`{"a":"\n"}`:                                                        false,
	"{\"a\":\"\xff\"}":                                                  false, // invalid UTF-8 becomes U+FFFD
	"{\"a\":\"\u2028\"}":                                                false,
	`{"a":01}`:                                                          false,
	`{"a":1.}`:                                                          false,
	`{"a":tru}`:                                                         false,
	`[1]`:                                                               false, // not an object
	`{"a":1}x`:                                                          false,
	`{"a":1,}`:                                                          false,
	`{"a":{"b":1}`:                                                      false,
	``:                                                                  false,
	`{"AB":1,"Ab":2,"a":3}`:                                             true, // byte order
	`{"a":"` + strings.Repeat("x", 40) + `"}`: true,
}

func TestCanonical(t *testing.T) {
	for doc, want := range canonicalCases {
		if got := Canonical(doc, nil); got != want {
			t.Errorf("Canonical(%q) = %v, want %v", doc, got, want)
		}
		checkCanonical(t, []byte(doc))
	}
	deep := strings.Repeat(`{"a":`, 70) + "1" + strings.Repeat("}", 70)
	if Canonical(deep, nil) {
		t.Error("a document deeper than 64 levels was judged")
	}
	var seen []string
	visit := func(s string, key bool) bool {
		if key {
			s = "k:" + s
		}
		seen = append(seen, s)
		return s != "stop"
	}
	if !Canonical(`{"a":["x",1,{"b":"y"}]}`, visit) || strings.Join(seen, ",") != "k:a,x,k:b,y" {
		t.Errorf("visited %q", seen)
	}
	if Canonical(`{"a":"stop"}`, visit) {
		t.Error("visit's false did not make Canonical false")
	}
}

// FuzzCanonical: whatever Canonical accepts, encoding/json decodes (with
// UseNumber) and json.Marshal writes back byte for byte.
func FuzzCanonical(f *testing.F) {
	for doc := range canonicalCases {
		f.Add([]byte(doc))
	}
	f.Fuzz(checkCanonical)
}

func checkCanonical(t *testing.T, data []byte) {
	if !Canonical(string(data), nil) {
		return
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil || dec.More() {
		t.Fatalf("Canonical(%q) but encoding/json: %v", data, err)
	}
	out, err := json.Marshal(m)
	if err != nil || !bytes.Equal(out, data) {
		t.Fatalf("Canonical(%q) but json.Marshal writes %q (%v)", data, out, err)
	}
}
