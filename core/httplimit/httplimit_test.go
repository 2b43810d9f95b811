package httplimit

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// serve runs BodyDeadline(h, d) on a loopback server.
func serve(t *testing.T, h http.Handler, d time.Duration) string {
	t.Helper()
	srv := httptest.NewServer(BodyDeadline(h, d))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

// dial opens a raw connection that fails the test rather than hang: the
// deadline is a guard, far above the body deadline the test sets.
func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	_ = c.SetDeadline(time.Now().Add(30 * time.Second))
	return c
}

// TestBodyDeadlineClosesTricklingBody: a body that has not arrived by the
// deadline fails to read (IsTimeout), and the connection is closed, whether
// the handler read the body or not.
func TestBodyDeadlineClosesTricklingBody(t *testing.T) {
	addr := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/ignore" {
			w.WriteHeader(http.StatusNoContent) // net/http discards the body, under the deadline
			return
		}
		if _, err := io.ReadAll(r.Body); IsTimeout(err) {
			w.WriteHeader(http.StatusRequestTimeout)
			return
		}
		w.WriteHeader(http.StatusOK)
	}), 100*time.Millisecond)
	for path, want := range map[string]int{"/read": http.StatusRequestTimeout, "/ignore": http.StatusNoContent} {
		t.Run(path, func(t *testing.T) {
			c := dial(t, addr)
			fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n[", path)
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != want {
				t.Errorf("status %d, want %d", resp.StatusCode, want)
			}
			// The server closes the connection: the next read ends in EOF,
			// not in the test's own 30 s guard.
			if _, err := c.Read(make([]byte, 1)); err != io.EOF {
				t.Errorf("connection still open after the body deadline: read gave %v", err)
			}
		})
	}
}

// TestBodyDeadlineLiftedOnceRead: once the body is read, the handler may
// take longer than the deadline without its context ending, and the
// connection stays usable for the next request.
func TestBodyDeadlineLiftedOnceRead(t *testing.T) {
	const d = 50 * time.Millisecond
	addr := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.ReadAll(r.Body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		time.Sleep(4 * d) // a handler waiting for a conductor
		if err := r.Context().Err(); err != nil {
			http.Error(w, "context ended: "+err.Error(), http.StatusInternalServerError)
			return
		}
		_, _ = io.WriteString(w, "ok")
	}), d)
	c := dial(t, addr)
	br := bufio.NewReader(c)
	for i := range 2 {
		fmt.Fprintf(c, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}")
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || string(b) != "ok" {
			t.Fatalf("request %d: %d %s", i, resp.StatusCode, b)
		}
	}
}

func TestListenerCap(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if Listener(ln, 0) != ln {
		t.Error("max 0 wrapped the listener")
	}
	capped := Listener(ln, 1)
	go func() {
		for range 2 {
			if c, err := net.Dial("tcp", ln.Addr().String()); err == nil {
				defer c.Close()
			}
		}
	}()
	first, err := capped.Accept()
	if err != nil {
		t.Fatal(err)
	}
	second := make(chan net.Conn, 1)
	go func() {
		c, err := capped.Accept()
		if err == nil {
			second <- c
		}
		close(second)
	}()
	select {
	case <-second:
		t.Fatal("a second connection was accepted while the first was open")
	case <-time.After(50 * time.Millisecond):
	}
	first.Close()
	if c, ok := <-second; !ok {
		t.Fatal("the second connection was never accepted")
	} else {
		c.Close()
	}
}
