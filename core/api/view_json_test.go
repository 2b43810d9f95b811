package api

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
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
		{},
		nil,
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
