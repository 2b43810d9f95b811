package jsonlimit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestCheck(t *testing.T) {
	deep := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	tests := map[string]struct {
		in      string
		depth   int
		wantErr string
		tooDeep bool
	}{
		"object":               {in: `{"a":1,"b":{"c":[1,2,{"d":null}]},"e":"x"}`},
		"scalar":               {in: `"x"`},
		"same key, two levels": {in: `{"a":{"a":1},"b":[{"a":1},{"a":2}]}`},
		"at the limit":         {in: deep(64)},
		"one past the limit":   {in: deep(65), wantErr: "nesting deeper than 64 levels", tooDeep: true},
		"custom limit":         {in: `{"a":{"b":{}}}`, depth: 2, wantErr: "nesting deeper than 2 levels", tooDeep: true},
		"very deep":            {in: strings.Repeat(`{"a":`, 100000), wantErr: "nesting deeper", tooDeep: true},
		"duplicate key":        {in: `{"driver":"a","driver":"b"}`, wantErr: `duplicate key "driver"`},
		"nested duplicate":     {in: `[{"x":{"p":1,"p":2}}]`, wantErr: `duplicate key "p"`},
		"invalid UTF-8":        {in: "{\"a\":\"\xff\"}", wantErr: "not valid UTF-8"},
		"trailing data":        {in: `{} {}`, wantErr: "unexpected data after"},
		"truncated":            {in: `{"a":[1,`, wantErr: "incomplete"},
		"syntax":               {in: `{"a" 1}`, wantErr: "malformed JSON at byte"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			err := Check([]byte(tc.in), tc.depth)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("Check: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err = %v, want %q", err, tc.wantErr)
			}
			if errors.Is(err, ErrTooDeep) != tc.tooDeep {
				t.Errorf("errors.Is(err, ErrTooDeep) = %v", !tc.tooDeep)
			}
		})
	}
}

func TestCheckNeverEchoesValues(t *testing.T) {
	for _, in := range []string{`{"pw":"hunter2" "x"}`, `{"pw":"hunter2",}`, `{"pw":hunter2}`} {
		if err := Check([]byte(in), 0); err == nil || strings.Contains(err.Error(), "hunter2") {
			t.Errorf("Check(%s) = %v", in, err)
		}
	}
}

// FuzzCheck: Check never panics, and whatever it accepts encoding/json
// accepts too.
func FuzzCheck(f *testing.F) {
	for _, s := range []string{`{"a":[1,{"b":null}]}`, `[[[[]]]]`, `{"a":1,"a":2}`, "\"\xff\"", `{} x`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if Check(data, 8) == nil && len(strings.TrimSpace(string(data))) > 0 {
			// Numbers as json.Number, as every Rivet reader decodes them: a
			// float64 cannot hold 1e400, but the document is fine.
			dec := json.NewDecoder(bytes.NewReader(data))
			dec.UseNumber()
			var v any
			if err := dec.Decode(&v); err != nil {
				t.Fatalf("Check accepted %q, encoding/json refused it: %v", data, err)
			}
		}
	})
}

// The fast reading of well-formed documents and the token-by-token one
// agree on every document: same verdict, same message.
func FuzzCheckFastMatchesTokens(f *testing.F) {
	many := func(dup bool) string {
		var b strings.Builder
		b.WriteString("{")
		for i := range 40 {
			fmt.Fprintf(&b, `"k%d":{"k%d":[%d]},`, i, i, i)
		}
		if dup {
			b.WriteString(`"k7":0}`)
		} else {
			b.WriteString(`"z":0}`)
		}
		return b.String()
	}
	for _, s := range []string{`{"a":[1,{"b":null}]}`, `[[[[]]]]`, `{"a":1,"a":2}`, `{"a":1,"\u0061":2}`, `{"a\"":1,"a\"":2}`,
		`{"a":{"b":1},"b":{"a":1},"a ":2}`, `{"x":"a:b", "y" : "\":"}`, many(false), many(true), `[{"a":1},{"a":1}]`,
		` {"a" :1 , "a"	:2} `, `"k":`, `{"a":{"b":{"c":{}}}}`, ``, ` `, `{} {}`} {
		f.Add([]byte(s), 3)
		f.Add([]byte(s), 64)
	}
	f.Fuzz(func(t *testing.T, data []byte, depth int) {
		depth = depth%70 + 1
		if depth <= 0 {
			depth += 70
		}
		fast, slow := Check(data, depth), check(data, depth)
		if !utf8.Valid(data) {
			return
		}
		if (fast == nil) != (slow == nil) || fast != nil && fast.Error() != slow.Error() {
			t.Fatalf("Check(%q, %d) = %v; token by token: %v", data, depth, fast, slow)
		}
	})
}

// BenchmarkCheck: a node create body and a JSON-RPC envelope carrying a node.
func BenchmarkCheck(b *testing.B) {
	body := []byte(`{"name":"node-1","driver":"ipmi","driver_info":{"ipmi_address":"10.0.0.1","ipmi_username":"admin",` +
		`"ipmi_password":"secret","ipmi_port":623},"properties":{"cpus":8,"memory_mb":16384,"local_gb":100,"cpu_arch":"x86_64"},` +
		`"extra":{"rack":"r1","row":"a"},"resource_class":"baremetal"}`)
	for _, tc := range []struct {
		name string
		fn   func([]byte, int) error
	}{{"fast", Check}, {"tokens", check}} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := tc.fn(body, DefaultMaxDepth); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
