package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// The machine floor: a bare net/http server answering each GET
// /v1/nodes/{uuid} with the bytes rivet dev answered it with (status,
// headers, body), read once from rivet dev and served from memory. wrk
// measures it with the same command, in the same round, right after rivet
// dev: what its p99 is, the machine (16 connections, wrk's two threads
// and the server sharing the vCPUs, the scheduler, the loopback) costs
// any Go server; what rivet dev adds to it is Rivet's.

// targetFloor is the floor's target name in the goals run.
const targetFloor = "machine floor (net/http, same bytes)"

// floorResponses is what the floor serves: the response of each path.
type floorResponses struct {
	Status int `json:"status"`
	// Header is the first response's header less Date and
	// Content-Length, which net/http writes itself.
	Header http.Header       `json:"header"`
	Bodies map[string][]byte `json:"bodies"`
}

// uuids are the nodes whose GET fr answers.
func (fr floorResponses) uuids() []string {
	var out []string
	for path := range fr.Bodies {
		if u, ok := strings.CutPrefix(path, "/v1/nodes/"); ok {
			out = append(out, u)
		}
	}
	slices.Sort(out)
	return out
}

// fetchFloorResponses reads GET /v1/nodes/{uuid} of each uuid from the
// server the client talks to, with the headers wrk sends.
func fetchFloorResponses(ctx context.Context, c *client, uuids []string) (floorResponses, error) {
	fr := floorResponses{Bodies: make(map[string][]byte, len(uuids))}
	for _, u := range uuids {
		path := "/v1/nodes/" + u
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+path, nil)
		if err != nil {
			return fr, err
		}
		req.Header = c.getHeader.Clone()
		resp, err := c.http.Do(req)
		if err != nil {
			return fr, fmt.Errorf("GET %s: %w", path, err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return fr, fmt.Errorf("GET %s: %w", path, err)
		}
		if resp.StatusCode != http.StatusOK {
			return fr, fmt.Errorf("GET %s: status %d: %.300s", path, resp.StatusCode, body)
		}
		if fr.Header == nil {
			fr.Status, fr.Header = resp.StatusCode, resp.Header.Clone()
			fr.Header.Del("Date")
			fr.Header.Del("Content-Length")
		}
		fr.Bodies[path] = body
	}
	if len(fr.Bodies) == 0 {
		return fr, errors.New("no node to read")
	}
	return fr, nil
}

// floorHandler answers a path of fr with its bytes, anything else 404.
func floorHandler(fr floorResponses) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := fr.Bodies[r.URL.Path]
		if !ok || r.Method != http.MethodGet {
			http.NotFound(w, r)
			return
		}
		h := w.Header()
		for k, v := range fr.Header {
			h[k] = v
		}
		w.WriteHeader(fr.Status)
		_, _ = w.Write(body)
	})
}

// floorServe is `bench floor-serve --listen ADDR --responses FILE`: the
// floor's process, a subprocess of the suite so that its CPU time and
// its Go runtime are its own, as rivet dev's are.
func floorServe(args []string) int {
	fs := flag.NewFlagSet("bench floor-serve", flag.ContinueOnError)
	listen := fs.String("listen", "127.0.0.1:0", "address to serve on")
	file := fs.String("responses", "", "JSON file of the responses (written by the goals run)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	b, err := os.ReadFile(*file)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench floor-serve:", err)
		return 1
	}
	var fr floorResponses
	if err := json.Unmarshal(b, &fr); err != nil || fr.Status == 0 || len(fr.Bodies) == 0 {
		fmt.Fprintf(os.Stderr, "bench floor-serve: %s: not a responses file (%v)\n", *file, err)
		return 1
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench floor-serve:", err)
		return 1
	}
	srv := &http.Server{Handler: floorHandler(fr), ReadHeaderTimeout: time.Minute}
	err = srv.Serve(ln)
	fmt.Fprintln(os.Stderr, "bench floor-serve:", err)
	return 1
}

// startFloor writes fr into dir and starts the floor's process on a free
// loopback port, waiting until it answers one of the paths.
func startFloor(ctx context.Context, fr floorResponses, dir string) (*service, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(fr)
	if err != nil {
		return nil, err
	}
	f, err := os.CreateTemp(dir, "floor-*.json")
	if err != nil {
		return nil, err
	}
	file := f.Name()
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(file)
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		os.Remove(file)
		return nil, err
	}
	name := strings.TrimSuffix(filepath.Base(file), ".json")
	p, err := startProc(dir, name, self, "floor-serve", "--listen", fmt.Sprintf("127.0.0.1:%d", port), "--responses", file)
	if err != nil {
		os.Remove(file)
		return nil, err
	}
	s := &service{name: targetFloor, url: fmt.Sprintf("http://127.0.0.1:%d", port), procs: []*proc{p}}
	s.stop = func() []error {
		var errs []error
		if err := p.stop(10 * time.Second); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", p.name, err))
		}
		if err := os.Remove(file); err != nil {
			errs = append(errs, err)
		}
		return errs
	}
	var probe string
	for path := range fr.Bodies {
		probe = path
		break
	}
	hc := &http.Client{Timeout: 5 * time.Second}
	for deadline := time.Now().Add(30 * time.Second); ; {
		if p.exited() {
			s.stop()
			return nil, fmt.Errorf("%s exited at start: %v\n%s", p.name, p.err, p.tail(20))
		}
		if resp, err := hc.Get(s.url + probe); err == nil {
			resp.Body.Close()
			if resp.StatusCode == fr.Status {
				return s, nil
			}
		}
		if time.Now().After(deadline) {
			s.stop()
			return nil, fmt.Errorf("%s did not answer within 30 s\n%s", p.name, p.tail(20))
		}
		select {
		case <-ctx.Done():
			s.stop()
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}
