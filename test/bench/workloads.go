package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
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
	// wrk-get and wrk-detail are get and detail measured by wrk (wrk.go).
	"wrk-get":    wrkGet,
	"wrk-detail": wrkDetail,
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

// readFor is a read workload: conc workers, each with its own getter,
// GET path until d has passed; check, when not nil, judges each body.
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
	nb, err := newNodeBody(tmpl)
	if err != nil {
		return Result{}, fmt.Errorf("--node-template: %w", err)
	}
	stamp := time.Now().UnixNano()
	// Each worker POSTs a body spliced from the template marshalled once,
	// and reads only the created node's uuid from the reply.
	lat, errs, elapsed := parallelEach(ctx, b.o.nodes, b.o.concurrency, func() (func(context.Context, int) error, func()) {
		g := b.c.newGetter()
		var body []byte
		return func(ctx context.Context, i int) error {
			body = nb.appendTo(body[:0], stamp, i)
			resp, err := g.post(ctx, "/v1/nodes", body, http.StatusCreated)
			if err != nil {
				return err
			}
			uuid, err := createdUUID(resp)
			if err != nil {
				return fmt.Errorf("POST /v1/nodes: %w: %.300s", err, resp)
			}
			b.added(uuid)
			return nil
		}, g.close
	})
	return lat.result("enroll", b.o.concurrency, errs, elapsed), nil
}

// added records an enrolled node.
func (b *bench) added(uuid string) {
	b.mu.Lock()
	b.nodes = append(b.nodes, uuid)
	b.mu.Unlock()
}

// nodeBody is enroll's request body less the per-node name: the template
// marshalled once, without a "name" of its own, which the per-node name
// replaces (as when enroll set it in a copy of the template map).
// Marshalling a copy of the map for every node was a good part of the
// bench's CPU per enrolled node.
type nodeBody struct {
	// rest follows the name member: ",<the template's members>}" or "}".
	rest []byte
}

func newNodeBody(tmpl map[string]any) (nodeBody, error) {
	others := make(map[string]any, len(tmpl))
	for k, v := range tmpl {
		if k != "name" {
			others[k] = v
		}
	}
	b, err := json.Marshal(others)
	if err != nil {
		return nodeBody{}, err
	}
	// b is "{}" or "{members}".
	rest := b[1:]
	if len(rest) > 1 {
		rest = append([]byte{','}, rest...)
	}
	return nodeBody{rest: rest}, nil
}

// appendTo appends the body of node i, named bench-<stamp>-<i> (digits
// and dashes only: nothing to escape), to dst.
func (nb nodeBody) appendTo(dst []byte, stamp int64, i int) []byte {
	dst = append(dst, `{"name":"bench-`...)
	dst = strconv.AppendInt(dst, stamp, 10)
	dst = append(dst, '-')
	dst = strconv.AppendInt(dst, int64(i), 10)
	dst = append(dst, '"')
	return append(dst, nb.rest...)
}

// createdUUID returns the "uuid" member of body, the JSON object of the
// node a POST /v1/nodes created. It scans the object's top-level members,
// stepping over every other value (strings with their escapes, nested
// objects and arrays), so a "uuid" inside "extra" or "driver_info" is not
// taken for the node's. json.Unmarshal into a one-field struct took some
// 17 µs on Rivet's 1.5 KB reply (BenchmarkCreatedUUID, on the loaded
// 2-core machine), more than the POST itself; the scan takes 2 µs,
// allocating only the string it returns. Whatever
// the scan does not recognise (a uuid written with escapes, a body that is
// not an object, a truncated one) goes to json.Unmarshal, which says what
// is wrong. The scan does not validate the parts of the body it steps over.
func createdUUID(body []byte) (string, error) {
	if uuid, ok := scanTopLevelString(body, "uuid"); ok {
		return uuid, nil
	}
	var n struct {
		UUID string `json:"uuid"`
	}
	if err := json.Unmarshal(body, &n); err != nil {
		return "", fmt.Errorf("the created node: %w", err)
	}
	if n.UUID == "" {
		return "", errors.New("the created node has no uuid")
	}
	return n.UUID, nil
}

// scanTopLevelString returns the string value of key among the members of
// the JSON object b, when both the key and the value are written without
// escapes; ok is false otherwise, or when b is not an object the scan can
// step through.
func scanTopLevelString(b []byte, key string) (value string, ok bool) {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return "", false
	}
	i++
	for {
		i = skipSpace(b, i)
		if i >= len(b) || b[i] != '"' {
			return "", false // "}" (not found), or not a member
		}
		k, end, escaped := scanString(b, i)
		if end < 0 {
			return "", false
		}
		i = skipSpace(b, end)
		if i >= len(b) || b[i] != ':' {
			return "", false
		}
		i = skipSpace(b, i+1)
		if !escaped && string(k) == key {
			if i >= len(b) || b[i] != '"' {
				return "", false
			}
			v, end, escaped := scanString(b, i)
			if end < 0 || escaped || len(v) == 0 {
				return "", false
			}
			return string(v), true
		}
		if i = skipValue(b, i); i < 0 {
			return "", false
		}
		i = skipSpace(b, i)
		if i >= len(b) || b[i] != ',' {
			return "", false // "}": the object has no such member
		}
		i++
	}
}

// scanString reads the JSON string starting at b[i] == '"': its raw
// contents, the index after its closing quote (-1 when unterminated), and
// whether it holds escapes.
func scanString(b []byte, i int) (raw []byte, end int, escaped bool) {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			escaped = true
			j++ // the escaped character, even a quote
		case '"':
			return b[i+1 : j], j + 1, escaped
		}
	}
	return nil, -1, escaped
}

// skipValue returns the index after the JSON value starting at b[i], or
// -1 when it does not end. Within an object or array brackets are
// counted, not matched: the scan does not validate.
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		_, end, _ := scanString(b, i)
		return end
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				_, end, _ := scanString(b, i)
				if end < 0 {
					return -1
				}
				i = end
				continue
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return -1
	default: // a number, true, false or null
		start := i
		for i < len(b) && b[i] != ',' && b[i] != '}' && b[i] != ']' && skipSpace(b, i) == i {
			i++
		}
		if i == start {
			return -1
		}
		return i
	}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// runWorkload runs the workload called name and adds the CPU time this
// process spent in it per request: the bench shares the machine with the
// server it measures, so its own cost is part of every figure.
func runWorkload(ctx context.Context, name string, b *bench) (Result, error) {
	before, ok := cpuTime()
	r, err := workloads[name](ctx, b)
	after, ok2 := cpuTime()
	// A workload run by another program (wrk) reports that one's CPU.
	if n := r.Requests + r.Errors; ok && ok2 && n > 0 && r.Requests > 0 && r.ClientCPUus == 0 {
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
	return lat.result("get", b.o.getConcurrency, errs, elapsed), nil
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
	return lat.result(fmt.Sprintf("list-%d", n), 1, errs, elapsed), nil
}

func detail(ctx context.Context, b *bench) (Result, error) {
	if _, err := b.need(100); err != nil {
		return Result{}, err
	}
	lat, errs, elapsed := b.readFor(ctx, b.o.duration, b.o.getConcurrency, "/v1/nodes/detail?limit=100", nil)
	return lat.result("detail-100", b.o.getConcurrency, errs, elapsed), nil
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
