package api

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/rivetmetal/rivet/core/release"
	"github.com/rivetmetal/rivet/core/version"
)

var mv = version.MustParse

func fixed(min, max string) Range {
	m := mv(max)
	return Range{Min: mv(min), Max: func() version.Version { return m }}
}

// echo answers 200 with the negotiated version in the body.
var echo = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	_, _ = w.Write([]byte(VersionFrom(r.Context()).String()))
})

type result struct {
	status            int
	body              string
	version, min, max string
	description       string
}

func do(t *testing.T, rg Range, header string, set bool) result {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, "/v1/nodes", nil)
	if set {
		req.Header.Set(HeaderVersion, header)
	}
	rec := httptest.NewRecorder()
	rg.Middleware(echo).ServeHTTP(rec, req)
	res := result{status: rec.Code, body: rec.Body.String(), version: rec.Header().Get(HeaderVersion),
		min: rec.Header().Get(HeaderMinVersion), max: rec.Header().Get(HeaderMaxVersion)}
	if rec.Code != http.StatusOK {
		var outer map[string]string
		var inner routingBody
		if err := json.Unmarshal(rec.Body.Bytes(), &outer); err != nil {
			t.Fatalf("error body is not JSON: %s", rec.Body)
		}
		if err := json.Unmarshal([]byte(outer["error_message"]), &inner); err != nil || inner.Code != rec.Code {
			t.Fatalf("error_message is not Ironic's double-encoded document: %s", rec.Body)
		}
		res.description = inner.Description
	}
	return res
}

// Every server-side use case of seeds/002_… (1 and 3A/3B involve an old
// Ironic and are client behaviour, tested with the CLI).
func TestMicroversionUseCases(t *testing.T) {
	tests := map[string]struct {
		rg     Range
		header string
		set    bool
		want   result
	}{
		"2: old client sends nothing": {rg: fixed("1.1", "1.26"),
			want: result{status: 200, body: "1.1", version: "1.1", min: "1.1", max: "1.26"}},
		"4: spam": {rg: fixed("1.1", "1.26"), header: "spam", set: true,
			want: result{status: 406, description: "Invalid value for X-OpenStack-Ironic-API-Version header"}},
		"4: l33t": {rg: fixed("1.1", "1.26"), header: "l33t", set: true,
			want: result{status: 406, description: "Invalid value for X-OpenStack-Ironic-API-Version header"}},
		"4: 1.2.3.4.5": {rg: fixed("1.1", "1.26"), header: "1.2.3.4.5", set: true,
			want: result{status: 406, description: "Invalid value for X-OpenStack-Ironic-API-Version header"}},
		"4: bare major": {rg: fixed("1.1", "1.26"), header: "1", set: true,
			want: result{status: 406, description: "Invalid value for X-OpenStack-Ironic-API-Version header"}},
		"5: client below server range": {rg: fixed("1.8", "1.15"), header: "1.6", set: true,
			want: result{status: 406, min: "1.8", max: "1.15",
				description: "Version 1.6 was requested but the minor version is not supported by this service. The supported version range is: [1.8, 1.15]."}},
		"6: client above server range": {rg: fixed("1.1", "1.5"), header: "1.10", set: true,
			want: result{status: 406, min: "1.1", max: "1.5",
				description: "Version 1.10 was requested but the minor version is not supported by this service. The supported version range is: [1.1, 1.5]."}},
		"7: negotiation starts with a 406 carrying the range": {rg: fixed("1.1", "1.10"), header: "1.15", set: true,
			want: result{status: 406, min: "1.1", max: "1.10",
				description: "Version 1.15 was requested but the minor version is not supported by this service. The supported version range is: [1.1, 1.10]."}},
		"8: compatible version": {rg: fixed("1.1", "1.12"), header: "1.10", set: true,
			want: result{status: 200, body: "1.10", version: "1.10", min: "1.1", max: "1.12"}},
		"9: latest": {rg: fixed("1.1", "1.26"), header: "latest", set: true,
			want: result{status: 200, body: "1.26", version: "1.26", min: "1.1", max: "1.26"}},
		"9: LATEST any case": {rg: fixed("1.1", "1.26"), header: "LaTeSt", set: true,
			want: result{status: 200, body: "1.26", version: "1.26", min: "1.1", max: "1.26"}},
		"other major": {rg: fixed("1.1", "1.26"), header: "2.0", set: true,
			want: result{status: 406, min: "1.1", max: "1.26",
				description: "Mutually exclusive versions requested. Version 2.0 requested but not supported by this service. The supported version range is: [1.1, 1.26]."}},
		"1.0 is gone": {rg: fixed("1.1", "1.26"), header: "1.0", set: true,
			want: result{status: 406, min: "1.1", max: "1.26",
				description: "Version 1.0 was requested but the minor version is not supported by this service. The supported version range is: [1.1, 1.26]."}},
		"empty header is absent": {rg: fixed("1.1", "1.26"), header: "", set: true,
			want: result{status: 200, body: "1.1", version: "1.1", min: "1.1", max: "1.26"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := do(t, tc.rg, tc.header, tc.set)
			if got.status == 200 {
				got.description = ""
			} else {
				got.body = ""
			}
			if got != tc.want {
				t.Fatalf("got  %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

// A pinned service's max is the pinned release's API version, and a SIGHUP
// unpin raises it without a restart.
func TestPinnedMaxFollowsPinner(t *testing.T) {
	tb, err := release.NewTable(
		release.Entry{Version: release.HeadKey, API: mv("1.31"), RPC: mv("1.1"), Objects: map[string][]version.Version{"Node": {mv("1.0")}}, ServiceVersion: 2},
		release.Entry{Version: "0.1", Name: "anvil", API: mv("1.26"), RPC: mv("1.0"), Objects: map[string][]version.Version{"Node": {mv("1.0")}}, ServiceVersion: 1},
	)
	if err != nil {
		t.Fatal(err)
	}
	pin, _ := tb.ParsePin("anvil")
	pn := release.NewPinner(tb, pin)
	rg := Range{Min: release.MinAPI, Max: func() version.Version { return pn.Effective().API }}
	if got := do(t, rg, "1.31", true); got.status != 406 || got.max != "1.26" {
		t.Fatalf("pinned: %+v", got)
	}
	if got := do(t, rg, "latest", true); got.version != "1.26" {
		t.Fatalf("pinned latest: %+v", got)
	}
	pn.Set(release.Pin{Mode: release.PinLatest}, nil)
	if got := do(t, rg, "1.31", true); got.status != 200 || got.max != "1.31" {
		t.Fatalf("unpinned: %+v", got)
	}
}

func TestRequireVersion(t *testing.T) {
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodGet, "/v1/nodes?fields=uuid", nil)
	req = req.WithContext(WithVersion(req.Context(), mv("1.7")))
	if RequireVersion(rec, req, mv("1.8")) || rec.Code != 406 || !strings.Contains(rec.Body.String(), `\"faultstring\":\"Request not acceptable.\"`) {
		t.Fatalf("RequireVersion below min: %d %s", rec.Code, rec.Body)
	}
}

func FuzzVersionHeader(f *testing.F) {
	for _, s := range []string{"", "1.1", "latest", "1.26", "2.0", "1.999999999999", "spam", "1.", " 1.2", "1.2.3"} {
		f.Add(s)
	}
	rg := fixed("1.1", "1.26")
	f.Fuzz(func(t *testing.T, h string) {
		req := httptest.NewRequest(http.MethodGet, "/v1/nodes", nil)
		req.Header["X-Openstack-Ironic-Api-Version"] = []string{h}
		rec := httptest.NewRecorder()
		rg.Middleware(echo).ServeHTTP(rec, req)
		if rec.Code != 200 && rec.Code != 406 {
			t.Fatalf("header %q gave %d", h, rec.Code)
		}
		checkFuzzReply(t, "version header "+h, rec.Code, rec.Body.Bytes())
		if rec.Code == 200 {
			v := mv(rec.Body.String())
			if v.Less(mv("1.1")) || mv("1.26").Less(v) {
				t.Fatalf("header %q negotiated %s outside the range", h, v)
			}
		}
	})
}
