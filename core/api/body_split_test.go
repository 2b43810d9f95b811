package api

import (
	"reflect"
	"testing"
)

// FuzzSplitObject holds readObject's fast path to its encoding/json
// reading: for any body splitObject takes apart, decodeObject gives the
// same object (keys and raw values byte for byte) and no error; bodies it
// leaves alone are decodeObject's to accept or word the 400 for.
func FuzzSplitObject(f *testing.F) {
	for _, seed := range []string{`{}`, ` {"driver": "fake-hardware", "name": "n-1"} `, `{"a":1,"a":2}`, `{"\u0061":1}`,
		`{"driver_info":{"ipmi_address":"10.0.0.1","nested":[1,{"x":null}]},"maintenance":true}`, `[1]`, `"x"`, ``,
		`{"a":1} {}`, `{"é":"\u00e9","b":-1.5e3}`, "{\"a\":\"\xff\"}", `{"a":{"b":{"c":{"d":{}}}}}`, `{"x":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}`} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, body string) {
		fast, ok := splitObject([]byte(body))
		if !ok {
			return
		}
		slow, err := decodeObject([]byte(body))
		if err != nil {
			t.Fatalf("body %q: split into %v, but decodeObject refuses it: %v", body, fast, err)
		}
		if len(fast) != len(slow) {
			t.Fatalf("body %q: split %d members, decodeObject %d", body, len(fast), len(slow))
		}
		for k, v := range slow {
			if fv, ok := fast[k]; !ok || string(fv) != string(v) {
				t.Fatalf("body %q: key %q: split %q (present %t), decodeObject %q", body, k, fv, ok, v)
			}
		}
	})
}

// TestSplitObjectLeavesTheRest: what splitObject does not take apart, and
// that it takes apart the usual body.
func TestSplitObjectLeavesTheRest(t *testing.T) {
	for _, body := range []string{``, `[]`, `"x"`, `{"a":1,"a":2}`, `{"\u0061":1}`, `{"a":1} {}`, `{"a":`, "{\"a\":\"\xff\"}"} {
		if o, ok := splitObject([]byte(body)); ok {
			t.Errorf("splitObject(%q) = %v, want it left to decodeObject", body, o)
		}
	}
	o, ok := splitObject([]byte(` {"driver": "fake-hardware", "extra": {"k": [1, 2]}, "maintenance": false} `))
	want := object{"driver": []byte(`"fake-hardware"`), "extra": []byte(`{"k": [1, 2]}`), "maintenance": []byte(`false`)}
	if !ok || !reflect.DeepEqual(o, want) {
		t.Fatalf("splitObject of a node body = %q, %t; want %q", o, ok, want)
	}
}
