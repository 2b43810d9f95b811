package client

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// pagedNodes serves n nodes two per page with Ironic's next links, built
// on a host the client cannot reach (as behind a proxy).
func pagedNodes(n int) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/nodes", func(w http.ResponseWriter, r *http.Request) {
		limit := 2
		if l, err := strconv.Atoi(r.URL.Query().Get("limit")); err == nil && l < limit {
			limit = l
		}
		start := 0
		if m := r.URL.Query().Get("marker"); m != "" {
			start, _ = strconv.Atoi(m[len("u-"):])
		}
		var page []any
		for i := start + 1; i <= n && len(page) < limit; i++ {
			page = append(page, map[string]any{"uuid": fmt.Sprintf("u-%d", i)})
		}
		body := map[string]any{"nodes": page}
		if len(page) == limit {
			body["next"] = fmt.Sprintf("http://unreachable.invalid/v1/nodes?sort_key=id&limit=%d&marker=u-%d", limit, start+limit)
		}
		writeJSON(w, 200, body)
	})
	return mux
}

func TestListFollowsNext(t *testing.T) {
	cases := map[string]struct {
		nodes    int
		opts     ListOptions
		wantN    int
		wantReqs []string
	}{
		"all pages": {nodes: 5, wantN: 5, wantReqs: []string{
			"GET /v1/nodes",
			"GET /v1/nodes?sort_key=id&limit=2&marker=u-2",
			"GET /v1/nodes?sort_key=id&limit=2&marker=u-4",
		}},
		"full last page ends on an empty page": {nodes: 4, wantN: 4, wantReqs: []string{
			"GET /v1/nodes",
			"GET /v1/nodes?sort_key=id&limit=2&marker=u-2",
			"GET /v1/nodes?sort_key=id&limit=2&marker=u-4",
		}},
		"limit stops early": {nodes: 5, opts: ListOptions{Limit: 1}, wantN: 1, wantReqs: []string{"GET /v1/nodes?limit=1"}},
		"detail and fields": {nodes: 1, opts: ListOptions{Fields: []string{"uuid", "name"}}, wantN: 1, wantReqs: []string{"GET /v1/nodes?fields=uuid%2Cname"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			fake, srv := newFake(t, "1.1", maxV, pagedNodes(tc.nodes))
			c := newTestClient(t, srv.URL, Request{}, nil)
			got, err := c.List(context.Background(), Nodes, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != tc.wantN {
				t.Errorf("got %d nodes, want %d", len(got), tc.wantN)
			}
			if diff := cmp.Diff(tc.wantReqs, fake.requests()); diff != "" {
				t.Errorf("requests (-want +got):\n%s", diff)
			}
		})
	}
}

func TestListStopsALoopingServer(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/ports", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, map[string]any{"ports": []any{map[string]any{"uuid": "p"}}, "next": "http://x/v1/ports?marker=p"})
	})
	_, srv := newFake(t, "1.1", maxV, mux)
	c := newTestClient(t, srv.URL, Request{}, nil)
	if _, err := c.List(context.Background(), Ports, ListOptions{}); err == nil {
		t.Fatal("a server repeating its next link did not stop the listing")
	}
}

func TestUnknownFieldsAreKept(t *testing.T) {
	_, srv := newFake(t, "1.1", maxV, nil)
	c := newTestClient(t, srv.URL, Request{}, nil)
	n, err := c.Get(context.Background(), Nodes, "n1")
	if err != nil {
		t.Fatal(err)
	}
	for field, want := range map[string]string{"future_field": "kept", "memory_mb": "4096", "name": "n1", "absent": ""} {
		if got := n.String(field); got != want {
			t.Errorf("%s = %q, want %q", field, got, want)
		}
	}
}
