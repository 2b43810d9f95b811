package api

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/core/release"
	"github.com/rivetmetal/rivet/core/version"
	"github.com/rivetmetal/rivet/db"
	"github.com/uptrace/bun"
)

// encoderBody is what writeJSON (encoding/json) writes for v.
func encoderBody(v any) []byte {
	rec := httptest.NewRecorder()
	writeJSON(rec, http.StatusOK, v)
	return rec.Body.Bytes()
}

func viewBody(view map[string]any) []byte {
	rec := httptest.NewRecorder()
	writeView(rec, http.StatusOK, view)
	return rec.Body.Bytes()
}

func collectionBody(name string, items []map[string]any, next string) []byte {
	rec := httptest.NewRecorder()
	writeCollection(rec, name, items, next)
	return rec.Body.Bytes()
}

// encoderCollection is the body writeCollection wrote with encoding/json.
func encoderCollection(name string, items []map[string]any, next string) []byte {
	if items == nil {
		items = []map[string]any{}
	}
	body := map[string]any{name: items}
	if next != "" {
		body["next"] = next
	}
	return encoderBody(body)
}

// TestViewJSONMatchesEncoder holds writeView and writeCollection to what
// encoding/json writes: every node's view at many microversions (latest and
// pinned to 0.1, with masked secrets and JSON documents), whole detail
// lists, and synthetic views with values JSON must escape or that only
// encoding/json knows how to write.
func TestViewJSONMatchesEncoder(t *testing.T) {
	check := func(t *testing.T, what string, got, want []byte) {
		t.Helper()
		if !bytes.Equal(got, want) {
			t.Fatalf("%s:\nviewJSON %s\nencoder  %s", what, got, want)
		}
	}
	tb := release.Default()
	pin01, err := tb.ParsePin("0.1")
	if err != nil {
		t.Fatal(err)
	}
	for _, pin := range []release.Pin{{}, pin01} {
		p := newListPair(t, db.SQLite, release.NewPinner(tb, pin))
		seedListNodes(t, p.store)
		p.store.DB().Bun().NewUpdate().Table("nodes").
			Set("extra = ?", `{"a<b>":"\u2028&","n":1.50,"big":12345678901234567890,"l":[1,"x",null,{"z":true}]}`).
			Where("id % 2 = 0").Exec(context.Background())
		objs, err := p.store.LoadAll(context.Background(), "Node", func(q *bun.SelectQuery) *bun.SelectQuery { return q.Order("id") })
		if err != nil {
			t.Fatal(err)
		}
		s := &server{Deps: Deps{Store: p.store, Pinner: release.NewPinner(tb, pin)}, reg: p.store.Registry()}
		for _, ver := range []string{"1.1", "1.2", "1.5", "1.14", "1.24", "1.31"} {
			r := httptest.NewRequest(http.MethodGet, "/v1/nodes/detail", nil)
			r.Host = `h"<&>` + "\u2028"
			r = r.WithContext(WithVersion(context.Background(), version.MustParse(ver)))
			var items []map[string]any
			for _, o := range objs {
				view, err := s.nodeView(r, o.(*objects.Node), chassisUUIDs{})
				if err != nil {
					t.Fatal(err)
				}
				check(t, fmt.Sprintf("node %s @%s", o.(*objects.Node).UUID, ver), viewBody(view), encoderBody(view))
				sel := selectFields(view, []string{"uuid", "extra", "driver_info"})
				check(t, "selected fields", viewBody(sel), encoderBody(sel))
				items = append(items, view)
			}
			for _, next := range []string{"", "http://x/v1/nodes?marker=a&limit=2"} {
				for _, name := range []string{"nodes", "chassis", "ports", "portgroups"} {
					check(t, "collection "+name, collectionBody(name, items, next), encoderCollection(name, items, next))
					check(t, "empty collection "+name, collectionBody(name, nil, next), encoderCollection(name, nil, next))
				}
			}
		}
	}
	odd := []map[string]any{
		{"s": "plain", "html": "<a href='x'>&amp;</a>", "ctl": "a\x00b\x1f\n\r\t\"\\", "sep": "\u2028\u2029", "bad": "\xff\xfeok",
			"uni": "ünïcode ☃ 😀", "nil": nil, "t": true, "f": false, "": "empty key", "k\"ey<": 1},
		{"links": []link{{Href: "http://h/v1/x", Rel: "self"}, {Href: "h\"<", Rel: "describedby", Type: "text/html"}},
			"nolinks": []link(nil), "empty": []link{}},
		{"m": map[string]any{"b": json.Number("1.0"), "a": []any{1, 2.5, "x"}}, "nilmap": map[string]any(nil),
			"strs": []string{"a", "<"}, "i": 42, "f": 1e21, "sp": (*string)(nil)},
		{"doc": map[string]any{"n": []any{json.Number("0"), json.Number("-0.5e+3"), json.Number("1E9"), map[string]any{}, []any{}, []any(nil)},
			"z<": map[string]any{"b": map[string]any(nil), "a": "\u2028<>&", "c": true, "d": nil}}},
		{"badnum": map[string]any{"x": json.Number("01")}}, {"emptynum": map[string]any{"x": json.Number("")}},
		{"dot": map[string]any{"x": json.Number("1.")}}, {"exp": map[string]any{"x": []any{json.Number("1e")}}},
		{"float": map[string]any{"x": []any{"a", 1.5, 1e21}}, "int": map[string]any{"x": 3}},
		{"deep": deepDocument(70)}, {"deep60": deepDocument(40)},
		{},
		nil,
	}
	var e viewJSON
	for i, want := range []bool{true, false, true, false} { // JSON documents, floats, 61 levels, 106 levels
		doc := []any{odd[3]["doc"], odd[8]["float"], odd[10]["deep60"], odd[9]["deep"]}[i]
		if _, ok := e.document(nil, doc); ok != want {
			t.Fatalf("document %d written without encoding/json: %v, want %v", i, ok, want)
		}
	}
	for i, v := range odd {
		check(t, fmt.Sprintf("odd view %d", i), viewBody(v), encoderBody(v))
	}
	check(t, "odd collection", collectionBody("nodes", odd, "n<&>"), encoderCollection("nodes", odd, "n<&>"))
	// A value encoding/json refuses: both write no body.
	bad := map[string]any{"x": "y", "nan": math.NaN()}
	check(t, "unencodable view", viewBody(bad), encoderBody(bad))
	check(t, "unencodable collection", collectionBody("nodes", []map[string]any{bad}, ""),
		encoderCollection("nodes", []map[string]any{bad}, ""))
}

// deepDocument is a JSON document nested 3n/2 levels deep.
func deepDocument(n int) map[string]any {
	doc := map[string]any{"leaf": json.Number("1")}
	for i := range n {
		if i%2 == 0 {
			doc = map[string]any{"l": []any{doc}}
		} else {
			doc = map[string]any{"m": doc}
		}
	}
	return doc
}

// FuzzViewDocument holds the view writer's JSON documents equal to
// encoding/json's for any document the database layer could decode (with
// UseNumber, as it does).
func FuzzViewDocument(f *testing.F) {
	for _, seed := range []string{`{}`, `{"a":[1,"x",null,{"z":true}],"n":1.50}`, `[1e400,-0,0.1]`, `"<&>\u2028"`,
		`{"ipmi_password":"x","nested":{"k":[[[]]]}}`, `{"a":{"b":{"c":{"d":[{"e":12345678901234567890}]}}}}`} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		dec := json.NewDecoder(bytes.NewReader([]byte(doc)))
		dec.UseNumber()
		var v any
		if dec.Decode(&v) != nil {
			return
		}
		for _, view := range []map[string]any{{"doc": v}, {"doc": map[string]any{"in": v}, "s": "x"}} {
			if got, want := viewBody(view), encoderBody(view); !bytes.Equal(got, want) {
				t.Fatalf("document %q:\nviewJSON %s\nencoder  %s", doc, got, want)
			}
		}
	})
}

// TestValidJSONNumber: validJSONNumber accepts exactly the json.Numbers
// encoding/json writes (an empty one aside, which it writes as 0).
func TestValidJSONNumber(t *testing.T) {
	for _, s := range []string{"0", "-0", "7", "-12.50", "1e5", "1E+5", "2.5e-3", "0.0e+1", "12345678901234567890",
		" 1", "1 ", "+1", "01", "-", "1.", ".5", "1e", "1e+", "--1", "0x1", "Infinity", "NaN", "1_000", "1.5.2", "[1]", "\"1\""} {
		_, err := json.Marshal(json.Number(s))
		if got, want := validJSONNumber(s), err == nil; got != want {
			t.Errorf("validJSONNumber(%q) = %v, encoding/json accepts it: %v", s, got, want)
		}
	}
}

// TestSortedKeys: sortedKeys gives exactly a view's keys, sorted, whether
// from the previous item, a recent set or anew, also for views of the same
// size with other keys, and never rewrites a set it handed out.
func TestSortedKeys(t *testing.T) {
	view := func(keys ...string) map[string]any {
		m := map[string]any{}
		for _, k := range keys {
			m[k] = nil
		}
		return m
	}
	var views []map[string]any
	for i := range 12 {
		var keys []string
		for j := range 8 + i%3 {
			keys = append(keys, fmt.Sprintf("k%02d", (j*7+i)%23))
		}
		views = append(views, view(keys...))
	}
	views = append(views, view("b", "a"), view("a", "c"), view())
	var last []string
	var handed [][]string
	var copies [][]string
	for round := range 3 {
		for i, v := range views {
			got := sortedKeys(last, v)
			want := make([]string, 0, len(v))
			for k := range v {
				want = append(want, k)
			}
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Fatalf("round %d, view %d: sortedKeys = %v, want %v", round, i, got, want)
			}
			handed, copies = append(handed, got), append(copies, slices.Clone(got))
			if round == 1 {
				last = got
			}
		}
	}
	for i := range handed {
		if !slices.Equal(handed[i], copies[i]) {
			t.Fatalf("a key set handed out was rewritten: %v, was %v", handed[i], copies[i])
		}
	}
}
