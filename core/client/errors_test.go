package client

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseErrorBody(t *testing.T) {
	cases := map[string]struct {
		body string
		want string
	}{
		"faultstring (handler error)": {
			body: `{"error_message": "{\"faultcode\": \"Client\", \"faultstring\": \"Node node-0 could not be found.\", \"debuginfo\": null}"}`,
			want: "Node node-0 could not be found.",
		},
		"description (routing error)": {
			body: `{"error_message": "{\"code\": 406, \"title\": \"Not Acceptable\", \"description\": \"Version 1.999 was requested but the minor version is not supported by this service. The supported version range is: [1.1, 1.82].\"}"}`,
			want: "Version 1.999 was requested but the minor version is not supported by this service. The supported version range is: [1.1, 1.82].",
		},
		"error_message as an object": {
			body: `{"error_message": {"faultstring": "boom"}}`,
			want: "boom",
		},
		"error_message as plain text": {
			body: `{"error_message": "plain words"}`,
			want: "plain words",
		},
		"faultstring with a traceback keeps the first line": {
			body: `{"error_message": "{\"faultstring\": \"bad thing\\nTraceback (most recent call last):\"}"}`,
			want: "bad thing",
		},
		// Issue 31: messages were cut at 300 characters, losing the end
		// that says what to do.
		"a long faultstring is kept whole, on one line": {
			body: `{"error_message": "{\"faultstring\": \"` + strings.Repeat("word ", 80) + `\\nfix: set driver_info/redfish_address.\"}"}`,
			want: strings.Repeat("word ", 80) + "fix: set driver_info/redfish_address.",
		},
		"a long foreign body is cut at a word": {
			body: strings.Repeat("abcd ", 100),
			want: strings.TrimSpace(strings.Repeat("abcd ", 60)) + " …",
		},
		"not Ironic's shape": {
			body: "<html>502 Bad Gateway</html>\n<body>",
			want: "<html>502 Bad Gateway</html>",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := ParseErrorBody([]byte(tc.body)); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestAPIErrorFromServer(t *testing.T) {
	_, srv := newFake(t, "1.1", maxV, nil)
	c := newTestClient(t, srv.URL, Request{}, nil)
	_, err := c.Get(context.Background(), Nodes, "sim-9")
	var apiErr *APIError
	if !errors.As(err, &apiErr) {
		t.Fatalf("err = %v, want *APIError", err)
	}
	want := &APIError{Method: "GET", Path: "/v1/nodes/sim-9", Status: 404, Message: "Node sim-9 could not be found.", RequestID: "req-fake", Version: maxV}
	if diff := cmp.Diff(want, apiErr); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if !errors.Is(err, ErrNotFound) || errors.Is(err, ErrConflict) {
		t.Errorf("errors.Is: NotFound %v Conflict %v", errors.Is(err, ErrNotFound), errors.Is(err, ErrConflict))
	}
}

func TestConnectionRefusedIsConnectError(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	c := newTestClient(t, "http://"+addr, Request{}, nil)
	_, err = c.List(context.Background(), Nodes, ListOptions{})
	var cerr *ConnectError
	if !errors.As(err, &cerr) || cerr.Endpoint != "http://"+addr+"/v1" {
		t.Fatalf("err = %v, want *ConnectError for the endpoint", err)
	}
}

func TestEndpoint(t *testing.T) {
	cases := map[string]struct {
		in, want string
		wantErr  bool
	}{
		"default":       {in: "", want: "http://127.0.0.1:6385/v1"},
		"bare":          {in: "http://h:6385", want: "http://h:6385/v1"},
		"slash":         {in: "http://h:6385/", want: "http://h:6385/v1"},
		"with v1":       {in: "http://h:6385/v1", want: "http://h:6385/v1"},
		"with v1 slash": {in: "https://h/v1/", want: "https://h/v1"},
		"prefix":        {in: "http://h/baremetal", want: "http://h/baremetal/v1"},
		"no scheme":     {in: "h:6385", wantErr: true},
		"credentials":   {in: "http://u:p@h:6385", wantErr: true},
		"other scheme":  {in: "ftp://h", wantErr: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := Endpoint(tc.in)
			if (err != nil) != tc.wantErr || got != tc.want {
				t.Errorf("Endpoint(%q) = %q, %v; want %q, error %v", tc.in, got, err, tc.want, tc.wantErr)
			}
		})
	}
}

func TestBasicAuthSent(t *testing.T) {
	var user, pass string
	var ok bool
	srv := newRawServer(t, func(w http.ResponseWriter, r *http.Request) {
		user, pass, ok = r.BasicAuth()
		w.Header().Set(HeaderVersion, maxV)
		writeJSON(w, 200, map[string]any{"nodes": []any{}})
	})
	c, err := New(Options{URL: srv.URL, Username: "admin", Password: "s3cret"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.List(context.Background(), Nodes, ListOptions{}); err != nil {
		t.Fatal(err)
	}
	if !ok || user != "admin" || pass != "s3cret" {
		t.Errorf("basic auth = %q %q %v", user, pass, ok)
	}
}
