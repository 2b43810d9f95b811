package client

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// vifRoutes serve node n1's VIFs and NMI as Rivet does from 1.28 and 1.29,
// and 404 below.
func vifRoutes() http.Handler {
	mux := http.NewServeMux()
	gate := func(min string, h http.HandlerFunc) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get(HeaderVersion) != "latest" && versionLess(r.Header.Get(HeaderVersion), min) {
				writeError(w, 404, "faultstring", "Resource could not be found.")
				return
			}
			if r.PathValue("node") != "n1" {
				writeError(w, 404, "faultstring", "Node "+r.PathValue("node")+" could not be found.")
				return
			}
			h(w, r)
		}
	}
	noContent := func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(204) }
	mux.HandleFunc("GET /v1/nodes/{node}/vifs", gate("1.28", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, 200, map[string]any{"vifs": []any{map[string]any{"id": "vif-1"}}})
	}))
	mux.HandleFunc("POST /v1/nodes/{node}/vifs", gate("1.28", noContent))
	mux.HandleFunc("DELETE /v1/nodes/{node}/vifs/{vif}", gate("1.28", noContent))
	mux.HandleFunc("PUT /v1/nodes/{node}/management/inject_nmi", gate("1.29", noContent))
	return mux
}

func versionLess(a, b string) bool {
	va, err := ParseRequest(a)
	if err != nil {
		return true
	}
	vb, _ := ParseRequest(b)
	return va.Version.Less(vb.Version)
}

func TestVIFsAndNMI(t *testing.T) {
	fake, srv := newFake(t, "1.1", maxV, vifRoutes())
	c := newTestClient(t, srv.URL, Request{}, nil)
	ctx := context.Background()
	vifs, err := c.ListVIFs(ctx, "n1")
	if err != nil || len(vifs) != 1 || vifs[0].ID != "vif-1" {
		t.Fatalf("ListVIFs = %v, %v", vifs, err)
	}
	if err := c.AttachVIF(ctx, "n1", "vif-2", map[string]any{"tag": "blue", "id": "ignored"}); err != nil {
		t.Fatal(err)
	}
	if err := c.DetachVIF(ctx, "n1", "vif-2"); err != nil {
		t.Fatal(err)
	}
	if err := c.InjectNMI(ctx, "n1"); err != nil {
		t.Fatal(err)
	}
	want := []string{"GET /v1/nodes/n1/vifs", "POST /v1/nodes/n1/vifs", "DELETE /v1/nodes/n1/vifs/vif-2", "PUT /v1/nodes/n1/management/inject_nmi"}
	if d := cmp.Diff(want, fake.requests()); d != "" {
		t.Errorf("requests (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"", `{"id":"vif-2","tag":"blue"}`, "", "{}"}, fake.bodies); d != "" {
		t.Errorf("bodies (-want +got):\n%s", d)
	}
	var ae *APIError
	if err := c.DetachVIF(ctx, "n9", "vif-2"); !errors.As(err, &ae) || !errors.Is(err, ErrNotFound) {
		t.Errorf("missing node: %v, want the API's 404", err)
	} else if fe := (*FeatureVersionError)(nil); errors.As(err, &fe) {
		t.Errorf("missing node reported as a version problem: %v", err)
	}
}

// TestVIFsAndNMIOnAnOlderServer: against a server (or a pinned release)
// at 1.26 the client negotiates down and reports the 404 as the feature
// needing a newer API, not as a missing node.
func TestVIFsAndNMIOnAnOlderServer(t *testing.T) {
	_, srv := newFake(t, "1.1", "1.26", vifRoutes())
	c := newTestClient(t, srv.URL, Request{}, nil)
	ctx := context.Background()
	cases := map[string]struct {
		call func() error
		want string
	}{
		"list":   {func() error { _, err := c.ListVIFs(ctx, "n1"); return err }, "the node VIF API needs API 1.28, but the server answered at API 1.26"},
		"attach": {func() error { return c.AttachVIF(ctx, "n1", "v", nil) }, "the node VIF API needs API 1.28, but the server answered at API 1.26"},
		"detach": {func() error { return c.DetachVIF(ctx, "n1", "v") }, "the node VIF API needs API 1.28, but the server answered at API 1.26"},
		"nmi":    {func() error { return c.InjectNMI(ctx, "n1") }, "NMI injection needs API 1.29, but the server answered at API 1.26"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			err := tc.call()
			var fe *FeatureVersionError
			if !errors.As(err, &fe) || err.Error() != tc.want || !errors.Is(err, ErrNotFound) {
				t.Errorf("err = %v, want %q", err, tc.want)
			}
		})
	}
}
