package api

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// serveEnv runs the env's API with Serve on loopback and returns its
// address.
func serveEnv(t *testing.T, e *env, o ServeOptions) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	o.ShutdownTimeout = 5 * time.Second
	go func() { served <- Serve(ctx, ln, e.h, o) }()
	t.Cleanup(func() { cancel(); <-served })
	return ln.Addr().String()
}

// TestServeClosesTricklingBody: a request body that has not arrived within
// body_timeout is answered 408 in Ironic's error body and its connection
// closed; before, only the headers had a deadline and such connections
// stayed open for good.
func TestServeClosesTricklingBody(t *testing.T) {
	e := newEnv(t)
	addr := serveEnv(t, e, ServeOptions{BodyTimeout: 100 * time.Millisecond})
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(30 * time.Second)) // a guard against hanging, not a measure
	fmt.Fprintf(c, "POST /v1/nodes HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{\"driver\":")
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestTimeout || !strings.Contains(string(body), "body_timeout") {
		t.Errorf("status %d %s, want 408 naming body_timeout", resp.StatusCode, body)
	}
	if _, err := c.Read(make([]byte, 1)); err != io.EOF {
		t.Errorf("connection still open after the body deadline: read gave %v", err)
	}
}

// TestServeLinksIgnoreHost: through a real server, links name the address
// the client reached, whatever Host and X-Forwarded-* say.
func TestServeLinksIgnoreHost(t *testing.T) {
	e := newEnv(t, func(d *Deps) { d.Links = Links{} })
	addr := serveEnv(t, e, ServeOptions{})
	req, _ := http.NewRequest("POST", "http://"+addr+"/v1/nodes", strings.NewReader(`{"driver":"fake-hardware"}`))
	req.Host = "evil.example"
	req.Header.Set("X-Forwarded-Host", "evil.example")
	req.Header.Set("X-Forwarded-Proto", "https")
	req.Header.Set(HeaderVersion, "latest")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("status %d", resp.StatusCode)
	}
	if loc, want := resp.Header.Get("Location"), "http://"+addr+"/v1/nodes/"; !strings.HasPrefix(loc, want) {
		t.Errorf("Location %q, want under %s", loc, want)
	}
	// A client that follows next as it is (openstacksdk) reaches the
	// second page on the server it used.
	e.node(nil)
	req, _ = http.NewRequest("GET", "http://"+addr+"/v1/nodes?limit=1", nil)
	req.Host = "evil.example"
	req.Header.Set(HeaderVersion, "latest")
	seen := 0
	for page := 0; req != nil && page < 5; page++ {
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var body struct {
			Nodes []any  `json:"nodes"`
			Next  string `json:"next"`
		}
		err = json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("page %d: %d %v", page, resp.StatusCode, err)
		}
		seen += len(body.Nodes)
		req = nil
		if body.Next != "" {
			if !strings.HasPrefix(body.Next, "http://"+addr+"/v1/nodes?") {
				t.Fatalf("next %q is not on %s", body.Next, addr)
			}
			req, _ = http.NewRequest("GET", body.Next, nil)
			req.Header.Set(HeaderVersion, "latest")
		}
	}
	if seen != 2 {
		t.Errorf("following next gave %d nodes, want 2", seen)
	}
}
