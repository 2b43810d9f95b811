package client

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rivetmetal/rivet/core/version"
)

// TestNegotiationUseCases replays seeds/002_… use cases against a fake
// server: the versions the client sends, in order, and the outcome.
func TestNegotiationUseCases(t *testing.T) {
	type outcome struct {
		Sent      []string
		Effective string // "" when the call fails
		Err       string // "", "version", "no-microversions"
		ServerMin string // from a *VersionError
		ServerMax string
	}
	cases := map[string]struct {
		serverMin, serverMax string // empty: old Ironic, no headers
		clientMin, clientMax string // empty: MinVersion, MaxVersion
		version              string // --api-version
		calls                int    // list nodes this many times
		want                 outcome
	}{
		"3A old Ironic, no version: go on at 1.1": {
			version: "", calls: 2,
			want: outcome{Sent: []string{maxV, "1.1"}, Effective: "1.1"},
		},
		"3B old Ironic, user version: error": {
			version: "1.10", calls: 1,
			want: outcome{Sent: []string{"1.10"}, Err: "no-microversions"},
		},
		"3B old Ironic, latest: error": {
			version: "latest", calls: 1,
			want: outcome{Sent: []string{"latest"}, Err: "no-microversions"},
		},
		"5 client 1.1-1.6 asks 1.6, server 1.8-1.15": {
			serverMin: "1.8", serverMax: "1.15", clientMax: "1.6", version: "1.6", calls: 1,
			want: outcome{Sent: []string{"1.6"}, Err: "version", ServerMin: "1.8", ServerMax: "1.15"},
		},
		"5 client 1.1-1.6 negotiating, server 1.8-1.15: no common version": {
			serverMin: "1.8", serverMax: "1.15", clientMax: "1.6", calls: 1,
			want: outcome{Sent: []string{"1.6"}, Err: "version", ServerMin: "1.8", ServerMax: "1.15"},
		},
		"5 this client negotiating, server 1.8-1.15: downgrade to 1.15": {
			serverMin: "1.8", serverMax: "1.15", calls: 1,
			want: outcome{Sent: []string{maxV, "1.15"}, Effective: "1.15"},
		},
		"6 client 1.10-1.15 asks 1.10, server 1.1-1.5": {
			serverMin: "1.1", serverMax: "1.5", clientMin: "1.10", clientMax: "1.15", version: "1.10", calls: 1,
			want: outcome{Sent: []string{"1.10"}, Err: "version", ServerMin: "1.1", ServerMax: "1.5"},
		},
		"6 client 1.10-1.15 negotiating, server 1.1-1.5: below the client's min": {
			serverMin: "1.1", serverMax: "1.5", clientMin: "1.10", clientMax: "1.15", calls: 1,
			want: outcome{Sent: []string{"1.15"}, Err: "version", ServerMin: "1.1", ServerMax: "1.5"},
		},
		"7A client 1.8-1.15, no version, server 1.1-1.10: negotiate 1.10 once": {
			serverMin: "1.1", serverMax: "1.10", clientMin: "1.8", clientMax: "1.15", calls: 2,
			want: outcome{Sent: []string{"1.15", "1.10", "1.10"}, Effective: "1.10"},
		},
		"7A this client, server 1.1-1.10": {
			serverMin: "1.1", serverMax: "1.10", calls: 1,
			want: outcome{Sent: []string{maxV, "1.10"}, Effective: "1.10"},
		},
		"7B user 1.15, server 1.1-1.10: error, no downgrade": {
			serverMin: "1.1", serverMax: "1.10", version: "1.15", calls: 1,
			want: outcome{Sent: []string{"1.15"}, Err: "version", ServerMin: "1.1", ServerMax: "1.10"},
		},
		"8 user 1.10, server 1.1-1.12": {
			serverMin: "1.1", serverMax: "1.12", version: "1.10", calls: 2,
			want: outcome{Sent: []string{"1.10", "1.10"}, Effective: "1.10"},
		},
		"8 no version, server 1.1-client max: max at once": {
			serverMin: "1.1", serverMax: maxV, calls: 1,
			want: outcome{Sent: []string{maxV}, Effective: maxV},
		},
		"9 latest, server 1.1-1.12: sent as-is, effective reported": {
			serverMin: "1.1", serverMax: "1.12", version: "LATEST", calls: 2,
			want: outcome{Sent: []string{"latest", "latest"}, Effective: "1.12"},
		},
		"9 latest, server newer than the client": {
			serverMin: "1.1", serverMax: "1.31", version: "latest", calls: 1,
			want: outcome{Sent: []string{"latest"}, Effective: "1.31"},
		},
		"user 1.99, server 1.1 to the client's max": {
			serverMin: "1.1", serverMax: maxV, version: "1.99", calls: 1,
			want: outcome{Sent: []string{"1.99"}, Err: "version", ServerMin: "1.1", ServerMax: maxV},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			fake, srv := newFake(t, tc.serverMin, tc.serverMax, nil)
			req, err := ParseRequest(tc.version)
			if err != nil {
				t.Fatal(err)
			}
			c := newTestClient(t, srv.URL, req, nil)
			if tc.clientMin != "" {
				c.clientMin = version.MustParse(tc.clientMin)
			}
			if tc.clientMax != "" {
				c.clientMax = version.MustParse(tc.clientMax)
				c.st.start(req, c)
			}
			var got outcome
			for i := 0; i < tc.calls && err == nil; i++ {
				_, err = c.List(context.Background(), Nodes, ListOptions{})
			}
			var verr *VersionError
			switch {
			case err == nil:
				got.Effective = c.Negotiation().Effective.String()
			case errors.As(err, &verr) && verr.NoMicroversions:
				got.Err = "no-microversions"
			case errors.As(err, &verr):
				got.Err = "version"
				got.ServerMin, got.ServerMax = verr.ServerMin.String(), verr.ServerMax.String()
			default:
				t.Fatalf("unexpected error: %v", err)
			}
			got.Sent = fake.sent()
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("outcome (-want +got):\n%s", diff)
			}
		})
	}
}

// TestParseRequest is use case 4: invalid versions fail before any client
// (so any request) exists; "latest" and 1.N above the client are accepted.
func TestParseRequest(t *testing.T) {
	cases := map[string]struct {
		in      string
		want    Request
		wantErr bool
	}{
		"empty negotiates": {in: "", want: Request{Kind: Negotiate}},
		"latest":           {in: "latest", want: Request{Kind: Latest}},
		"Latest any case":  {in: "Latest", want: Request{Kind: Latest}},
		"exact":            {in: "1.10", want: Request{Kind: Exact, Version: version.New(1, 10)}},
		"above the client": {in: "1.99", want: Request{Kind: Exact, Version: version.New(1, 99)}},
		"spam":             {in: "spam", wantErr: true},
		"l33t":             {in: "l33t", wantErr: true},
		"1.2.3.4.5":        {in: "1.2.3.4.5", wantErr: true},
		"bare major":       {in: "1", wantErr: true},
		"major 2":          {in: "2.0", wantErr: true},
		"leading zero":     {in: "1.01", wantErr: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := ParseRequest(tc.in)
			if (err != nil) != tc.wantErr {
				t.Fatalf("ParseRequest(%q) error = %v, want error %v", tc.in, err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestUserVersionCheckedBeforeAChange: with a user-given version, an
// unconfirmed client probes GET /v1 before a PUT, so an old server (3B)
// or a mismatch (7B) never sees the change.
func TestUserVersionCheckedBeforeAChange(t *testing.T) {
	cases := map[string]struct {
		min, max string
		version  string
		want     []string
		wantErr  bool
	}{
		"old server":          {version: "1.10", want: []string{"GET /v1"}, wantErr: true},
		"range mismatch":      {min: "1.1", max: "1.10", version: "1.15", want: []string{"GET /v1"}, wantErr: true},
		"supported":           {min: "1.1", max: "1.26", version: "1.20", want: []string{"GET /v1", "PUT /v1/nodes/n1/states/power"}},
		"negotiating skips":   {min: "1.1", max: maxV, want: []string{"PUT /v1/nodes/n1/states/power"}},
		"negotiating, old 3A": {want: []string{"PUT /v1/nodes/n1/states/power"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			fake, srv := newFake(t, tc.min, tc.max, nil)
			req, _ := ParseRequest(tc.version)
			c := newTestClient(t, srv.URL, req, nil)
			err := c.SetPowerState(context.Background(), "n1", PowerOn)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want error %v", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, fake.requests()); diff != "" {
				t.Errorf("requests (-want +got):\n%s", diff)
			}
		})
	}
}

// TestCacheAvoidsRenegotiation: a second client on the same endpoint and
// cache (a file for later invocations, memory within a process) starts at
// the negotiated version.
func TestCacheAvoidsRenegotiation(t *testing.T) {
	cases := map[string]func(t *testing.T) VersionCache{
		"file":   func(t *testing.T) VersionCache { return NewFileCache(t.TempDir()+"/rivet/versions.json", 0, nil) },
		"memory": func(*testing.T) VersionCache { return NewMemoryCache() },
	}
	for name, newCache := range cases {
		t.Run(name, func(t *testing.T) {
			fake, srv := newFake(t, "1.1", "1.10", nil)
			cache := newCache(t)
			first := newTestClient(t, srv.URL, Request{}, cache)
			if _, err := first.List(context.Background(), Nodes, ListOptions{}); err != nil {
				t.Fatal(err)
			}
			second := newTestClient(t, srv.URL+"/v1/", Request{}, cache)
			if _, err := second.List(context.Background(), Nodes, ListOptions{}); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]string{maxV, "1.10", "1.10"}, fake.sent()); diff != "" {
				t.Errorf("versions sent (-want +got):\n%s", diff)
			}
			if n := second.Negotiation(); !n.FromCache || n.Downgraded {
				t.Errorf("second client: %+v, want FromCache and no downgrade", n)
			}
			// A user-given version ignores the cache.
			third := newTestClient(t, srv.URL, Request{Kind: Exact, Version: version.New(1, 5)}, cache)
			if got := third.Negotiation().Sent; got != "1.5" {
				t.Errorf("user version with a cache sends %q, want 1.5", got)
			}
		})
	}
}

// TestFeature406IsNotAVersionError: a 406 for a version inside the
// server's range is the server refusing a feature, not a mismatch.
func TestFeature406IsNotAVersionError(t *testing.T) {
	fake, srv := newFake(t, "1.1", maxV, nil)
	fake.routes = http406Routes()
	c := newTestClient(t, srv.URL, Request{}, nil)
	_, err := c.List(context.Background(), Nodes, ListOptions{})
	var verr *VersionError
	if errors.As(err, &verr) || !errors.Is(err, ErrNotAcceptable) {
		t.Fatalf("err = %v, want an APIError matching ErrNotAcceptable", err)
	}
	if diff := cmp.Diff([]string{maxV}, fake.sent()); diff != "" {
		t.Errorf("versions sent (-want +got):\n%s", diff)
	}
}
