package jsonraw

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// membersCases are documents for the fast-path helpers: objects with
// whitespace everywhere, escapes, nesting, strings holding delimiters, and
// what is not an object.
var membersCases = []string{
	`{}`, ` { } `, `{"a":1}`, " \t\n{ \"a\" : 1 ,\r\n \"b\" : [ 1 , { \"c\" : \"}]\" } ] , \"d\":{\"e\":{}} } \n",
	`{"a":"x\"y","b\\":"\\","c":"\u2028<&>","é":"ü"}`, `{"a":-1.5e-3,"b":true,"c":false,"d":null,"e":0}`,
	`{"a":1,"a":2}`, `{"a":"[{","b":"\\\""}`, `{"a":[[],{},[{}]],"b":""}`,
	`[]`, `[{"a":1}]`, `"x"`, `1`, `null`, ``, ` `, `{"a":1} {}`, `{"a":`, `{"a" 1}`, `{"a":1,}`,
	"{\"\xff\":\"\xfe\"}", "{\"a\":\"\u2029\"}",
	`0`, `-0`, `-`, `01`, `1.`, `1.5`, `.5`, `1e5`, `1E+5`, `1e-05`, `1e`, `1e+`, `-1.5e3`, `+1`, `0x1`, `1 2`, `[1 2]`, `[1,]`, `[,1]`,
	`tru`, `true`, `truex`, `nul`, `nulll`, `false`, `[true,false,null]`, `{"a"}`, `{"a":}`, `{:1}`, `{1:1}`, `{"a":1 "b":2}`,
	`"\u00e9\uD800\n\t\/\b\f\r"`, `"\x"`, `"\u12"`, `"\u12G4"`, `"a` + "\x01" + `"`, `"a` + "\x7f" + `"`, `"<>&"`,
	"\"\u2028\"", "\"\xe2\x80\"", "[1,\n2]", "\t[ ]", "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]",
	` [ 1 , "a,]" , {"b":[2,"]"]} , [] ] `, `[{"op":"add","path":"/a~1b","value":"\""}]`,
}

// FuzzMembers holds Valid, Members, Unquote and MarshalsVerbatim to
// encoding/json on arbitrary input: Valid is json.Valid; on a valid object Members finds what json.Unmarshal
// into a map finds (keys, raw values) in document order; Unquote gives
// what json.Unmarshal gives whenever it answers; MarshalsVerbatim says true
// only when json.Marshal copies the value as it is.
func FuzzMembers(f *testing.F) {
	for _, s := range membersCases {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkValid(t, data)
		checkMembers(t, data)
		checkUnquote(t, data)
		checkVerbatim(t, data)
	})
}

func TestMembers(t *testing.T) {
	for _, s := range membersCases {
		checkValid(t, []byte(s))
		checkMembers(t, []byte(s))
		checkUnquote(t, []byte(s))
		checkVerbatim(t, []byte(s))
	}
	got, ok := Members(nil, []byte(` {"a" : [1, 2] , "b\"":{"c":"}"}} `))
	if !ok || len(got) != 2 || string(got[0].Key) != `"a"` || string(got[0].Value) != `[1, 2]` ||
		string(got[1].Key) != `"b\""` || string(got[1].Value) != `{"c":"}"}` {
		t.Fatalf("Members = %q, %v", got, ok)
	}
}

func checkMembers(t *testing.T, data []byte) {
	t.Helper()
	if !json.Valid(data) {
		Members(nil, data) // must not panic
		return
	}
	members, ok := Members(nil, data)
	var want map[string]json.RawMessage
	isObject := json.Unmarshal(data, &want) == nil && want != nil
	if ok != isObject {
		t.Fatalf("Members(%q): ok = %v, object = %v", data, ok, isObject)
	}
	if !ok {
		return
	}
	// The last value of each key, as json.Unmarshal keeps it.
	got := map[string]json.RawMessage{}
	for _, m := range members {
		var k string
		if err := json.Unmarshal(m.Key, &k); err != nil {
			t.Fatalf("Members(%q): key %q: %v", data, m.Key, err)
		}
		if cap(m.Key) != len(m.Key) || cap(m.Value) != len(m.Value) {
			t.Fatalf("Members(%q): a member can grow into the document", data)
		}
		got[k] = m.Value
	}
	if len(got) != len(want) {
		t.Fatalf("Members(%q) = %q, want %q", data, got, want)
	}
	for k, v := range want {
		if !bytes.Equal(got[k], v) {
			t.Fatalf("Members(%q)[%q] = %q, want %q", data, k, got[k], v)
		}
	}
}

func checkUnquote(t *testing.T, data []byte) {
	t.Helper()
	s, ok := Unquote(data)
	if !ok {
		return
	}
	var want string
	if err := json.Unmarshal(data, &want); err != nil || s != want {
		t.Fatalf("Unquote(%q) = %q; json.Unmarshal: %q, %v", data, s, want, err)
	}
}

func checkVerbatim(t *testing.T, data []byte) {
	t.Helper()
	got, err := json.Marshal(json.RawMessage(data))
	if verbatim := err == nil && bytes.Equal(got, data); MarshalsVerbatim(data) && !verbatim {
		t.Fatalf("MarshalsVerbatim(%q) = true; json.Marshal: %q, %v", data, got, err)
	}
	if s := string(data); len(s) < 64 {
		buf, ok := AppendPlainString(nil, s)
		want, _ := json.Marshal(s)
		if ok && !bytes.Equal(buf, want) {
			t.Fatalf("AppendPlainString(%q) = %q; json.Marshal: %q", s, buf, want)
		}
	}
}

func checkValid(t *testing.T, data []byte) {
	t.Helper()
	if got, want := Valid(data), json.Valid(data); got != want {
		t.Fatalf("Valid(%q) = %v, json.Valid: %v", data, got, want)
	}
}

func TestValidDeep(t *testing.T) {
	for _, depth := range []int{validMaxDepth - 1, validMaxDepth, validMaxDepth + 1, 10000, 10001} {
		doc := []byte(strings.Repeat("[", depth) + strings.Repeat("]", depth))
		checkValid(t, doc)
		checkValid(t, doc[:len(doc)-1])
		if MarshalsVerbatim(doc) && depth > validMaxDepth {
			t.Errorf("MarshalsVerbatim of depth %d = true, want false", depth)
		}
	}
}

// BenchmarkValid: Valid against json.Valid, and MarshalsVerbatim, on the
// node create body of core/jsonlimit's BenchmarkCheck.
func BenchmarkValid(b *testing.B) {
	body := []byte(`{"name":"node-1","driver":"ipmi","driver_info":{"ipmi_address":"10.0.0.1","ipmi_username":"admin",` +
		`"ipmi_password":"secret","ipmi_port":623},"properties":{"cpus":8,"memory_mb":16384,"local_gb":100,"cpu_arch":"x86_64"},` +
		`"extra":{"rack":"r1","row":"a"},"resource_class":"baremetal"}`)
	for _, tc := range []struct {
		name string
		fn   func([]byte) bool
	}{{"Valid", Valid}, {"json.Valid", json.Valid}, {"MarshalsVerbatim", MarshalsVerbatim}} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if !tc.fn(body) {
					b.Fatal("not valid")
				}
			}
		})
	}
}
