package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// bench holds state shared by the workloads: the nodes enrolled so far.
type bench struct {
	c     *client
	o     options
	mu    sync.Mutex
	nodes []string
}

var workloads = map[string]func(context.Context, *bench) (Result, error){
	"enroll":    enroll,
	"get":       get,
	"list":      list,
	"detail":    detail,
	"power":     power,
	"lifecycle": lifecycle,
}

// parallel runs fn for i in [0, n) on conc workers and returns each
// worker's latencies and the error count.
func parallel(ctx context.Context, n, conc int, fn func(ctx context.Context, i int) error) (*latencies, int, time.Duration) {
	return parallelEach(ctx, n, conc, func() (func(ctx context.Context, i int) error, func()) { return fn, func() {} })
}

// parallelEach is parallel with state of each worker's own: worker is
// called once in each worker goroutine and returns its fn and what to run
// when it stops (a read workload's connection, for one).
func parallelEach(ctx context.Context, n, conc int, worker func() (fn func(ctx context.Context, i int) error, done func())) (*latencies, int, time.Duration) {
	var next, errs atomic.Int64
	lat := &latencies{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	start := time.Now()
	for range conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			fn, done := worker()
			defer done()
			var mine []time.Duration
			for {
				i := int(next.Add(1) - 1)
				if i >= n || ctx.Err() != nil {
					break
				}
				t := time.Now()
				if err := fn(ctx, i); err != nil {
					errs.Add(1)
					continue
				}
				mine = append(mine, time.Since(t))
			}
			mu.Lock()
			lat.merge(mine)
			mu.Unlock()
		}()
	}
	wg.Wait()
	return lat, int(errs.Load()), time.Since(start)
}

// readFor is a read workload: conc workers, each with its own getter (a
// keep-alive connection of the lean client), GET path until d has
// passed; check, when not nil, judges each body.
func (b *bench) readFor(ctx context.Context, d time.Duration, conc int, path string, check func(body []byte) error) (*latencies, int, time.Duration) {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	return parallelEach(ctx, int(^uint(0)>>1), conc, func() (func(context.Context, int) error, func()) {
		g := b.c.newGetter()
		return func(ctx context.Context, _ int) error {
			body, err := g.get(ctx, path, http.StatusOK)
			if err == nil && check != nil {
				err = check(body)
			}
			if ctx.Err() != nil {
				return nil // cut off by the deadline, not a failure
			}
			return err
		}, g.close
	})
}

func enroll(ctx context.Context, b *bench) (Result, error) {
	var tmpl map[string]any
	if err := json.Unmarshal([]byte(b.o.template), &tmpl); err != nil {
		return Result{}, fmt.Errorf("--node-template: %w", err)
	}
	stamp := time.Now().UnixNano()
	lat, errs, elapsed := parallel(ctx, b.o.nodes, b.o.concurrency, func(ctx context.Context, i int) error {
		body := map[string]any{}
		for k, v := range tmpl {
			body[k] = v
		}
		body["name"] = fmt.Sprintf("bench-%d-%d", stamp, i)
		var n node
		if err := b.c.do(ctx, http.MethodPost, "/v1/nodes", body, http.StatusCreated, &n); err != nil {
			return err
		}
		b.mu.Lock()
		b.nodes = append(b.nodes, n.UUID)
		b.mu.Unlock()
		return nil
	})
	return lat.result("enroll", b.o.concurrency, errs, elapsed), nil
}

// readResult names the HTTP client of a read workload's result.
func (b *bench) readResult(r Result) Result {
	r.HTTPClient = b.c.readClient()
	return r
}

// runWorkload runs the workload called name and adds the CPU time this
// process spent in it per request: the bench shares the machine with the
// server it measures, so its own cost is part of every figure.
func runWorkload(ctx context.Context, name string, b *bench) (Result, error) {
	before, ok := cpuTime()
	r, err := workloads[name](ctx, b)
	after, ok2 := cpuTime()
	if n := r.Requests + r.Errors; ok && ok2 && n > 0 && r.Requests > 0 {
		r.ClientCPUus = float64((after - before).Nanoseconds()) / 1e3 / float64(n)
	}
	return r, err
}

// cpuTime is the user and system CPU time of this process so far.
func cpuTime() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}

func (b *bench) need(n int) ([]string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.nodes) < n {
		return nil, fmt.Errorf("needs %d enrolled nodes, has %d: run the enroll workload first with --nodes >= %d", n, len(b.nodes), n)
	}
	return b.nodes[:n], nil
}

func get(ctx context.Context, b *bench) (Result, error) {
	nodes, err := b.need(1)
	if err != nil {
		return Result{}, err
	}
	lat, errs, elapsed := b.readFor(ctx, b.o.duration, b.o.getConcurrency, "/v1/nodes/"+nodes[0], nil)
	return b.readResult(lat.result("get", b.o.getConcurrency, errs, elapsed)), nil
}

func list(ctx context.Context, b *bench) (Result, error) {
	if _, err := b.need(1); err != nil {
		return Result{}, err
	}
	b.mu.Lock()
	n := min(1000, len(b.nodes))
	b.mu.Unlock()
	path := fmt.Sprintf("/v1/nodes?limit=%d", n)
	lat, errs, elapsed := b.readFor(ctx, b.o.duration, 1, path, func(body []byte) error {
		if got, err := countListed(body); err != nil || got != n {
			return fmt.Errorf("list returned %d nodes (%v), want %d", got, err, n)
		}
		return nil
	})
	return b.readResult(lat.result(fmt.Sprintf("list-%d", n), 1, errs, elapsed)), nil
}

func detail(ctx context.Context, b *bench) (Result, error) {
	if _, err := b.need(100); err != nil {
		return Result{}, err
	}
	lat, errs, elapsed := b.readFor(ctx, b.o.duration, b.o.getConcurrency, "/v1/nodes/detail?limit=100", nil)
	return b.readResult(lat.result("detail-100", b.o.getConcurrency, errs, elapsed)), nil
}

// countListed checks that body is one JSON document and counts the items
// of its node list by their "uuid" keys, the only such key a list item
// has. Decoding 1,000 items into Go values took this single client about
// 8 ms per page, more than Rivet took to serve it, which made the list
// workload (one request at a time) measure the client.
func countListed(body []byte) (int, error) {
	if !json.Valid(body) {
		return 0, fmt.Errorf("the body is not JSON")
	}
	if !bytes.HasPrefix(bytes.TrimSpace(body), []byte(`{`)) || !bytes.Contains(body, []byte(`"nodes"`)) {
		return 0, fmt.Errorf("the body has no node list")
	}
	return bytes.Count(body, []byte(`"uuid":`)) + bytes.Count(body, []byte(`"uuid" :`)), nil
}
