package jsonlimit

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/rivetmetal/rivet/core/internal/leakcheck"
)

func TestDescribe(t *testing.T) {
	type env struct {
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
		ID     *int            `json:"id"`
		Nested struct {
			Flag bool `json:"flag"`
		} `json:"nested"`
	}
	tests := map[string]struct {
		body   string
		into   func() any
		strict bool
		want   string
	}{
		"string field":       {`{"method":5}`, func() any { return new(env) }, false, `"method" must be a string, not a number`},
		"nested field":       {`{"nested":{"flag":"yes"}}`, func() any { return new(env) }, false, `"nested.flag" must be true or false, not a string`},
		"int field":          {`{"id":1.5}`, func() any { return new(env) }, false, `"id" must be an integer, not a number`},
		"list of maps":       {`{"a":1}`, func() any { return new([]map[string]json.RawMessage) }, false, "the document must be a list, not an object"},
		"map":                {`[1]`, func() any { return new(map[string]any) }, false, "the document must be an object, not a list"},
		"syntax":             {`{"a":}`, func() any { return new(any) }, false, "malformed JSON at byte 6"},
		"empty":              {``, func() any { return new(any) }, false, "the document is empty"},
		"incomplete":         {`{"a":`, func() any { return new(any) }, false, "the JSON document is incomplete"},
		"unknown member":     {`{"method":"x","extra":1}`, func() any { return new(env) }, true, `unknown member "extra"`},
		"value never echoed": {`{"method":["s3cret"]}`, func() any { return new(env) }, false, `"method" must be a string, not a list`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			dec := json.NewDecoder(bytes.NewReader([]byte(tc.body)))
			if tc.strict {
				dec.DisallowUnknownFields()
			}
			err := dec.Decode(tc.into())
			if err == nil {
				t.Fatal("decoded")
			}
			got := Describe(err)
			if got != tc.want {
				t.Errorf("Describe(%v) = %q, want %q", err, got, tc.want)
			}
			if l := leakcheck.GoInternals(got); l != "" || strings.Contains(got, "s3cret") {
				t.Errorf("%q shows %q", got, l)
			}
		})
	}
	if got := Describe(Check([]byte(`{"a":1,"a":2}`), 0)); got != `duplicate key "a" in an object (at byte 10)` {
		t.Errorf("Describe of a Check error = %q", got)
	}
}
