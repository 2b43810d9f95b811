package api

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
)

// patchBody is a JSON-patch list of n adds, each to its own extra key.
func patchBody(n int) string {
	var b strings.Builder
	b.WriteByte('[')
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"op":"add","path":"/extra/key%05d","value":"value-%05d"}`, i, i)
	}
	b.WriteByte(']')
	return b.String()
}

// TestPatchOpCap: a PATCH of more operations than max_patch_operations is
// 400 naming the limit and the option, before any work on the node; the
// cap itself is accepted.
func TestPatchOpCap(t *testing.T) {
	tests := map[string]struct {
		max, ops int
		want     int
	}{
		"10,000 at the default": {0, 10000, http.StatusBadRequest},
		"the default cap":       {0, DefaultMaxPatchOps, http.StatusOK},
		"one over the default":  {0, DefaultMaxPatchOps + 1, http.StatusBadRequest},
		"configured cap":        {3, 3, http.StatusOK},
		"over a configured cap": {3, 4, http.StatusBadRequest},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, func(d *Deps) { d.MaxPatchOps = tc.max })
			id := e.node(nil)
			r := e.do("PATCH", "/v1/nodes/"+id, "latest", patchBody(tc.ops))
			if r.Code != tc.want {
				t.Fatalf("%d ops, max %d: status %d, want %d: %s", tc.ops, tc.max, r.Code, tc.want, r.Body)
			}
			limit := tc.max
			if limit == 0 {
				limit = DefaultMaxPatchOps
			}
			if tc.want == http.StatusBadRequest {
				want := fmt.Sprintf("%d operations is more than the %d one request may hold ([api] max_patch_operations)", tc.ops, limit)
				if f := r.Fault(t); !strings.Contains(f, want) {
					t.Errorf("fault %q lacks %q", f, want)
				}
				if slices.Contains(e.cond.calls, "update_node") {
					t.Error("the conductor was asked to update the node")
				}
				return
			}
			extra := r.JSON(t)["extra"].(map[string]any)
			if len(extra) != tc.ops {
				t.Errorf("extra has %d keys, want %d", len(extra), tc.ops)
			}
		})
	}
}

// TestPatchStopsWhenClientGoes: once the client has gone (its request's
// context ends), the PATCH stops validating operations and the conductor
// is never asked to save the node.
func TestPatchStopsWhenClientGoes(t *testing.T) {
	const ops, goneAt = 400, 10
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var seen []int
	e := newEnv(t, func(d *Deps) {
		d.patchOpSeen = func(i int) {
			seen = append(seen, i)
			if i == goneAt {
				cancel() // what net/http does when the connection closes
			}
		}
	})
	id := e.node(nil)
	req := httptest.NewRequestWithContext(ctx, "PATCH", "http://rivet.test/v1/nodes/"+id, strings.NewReader(patchBody(ops)))
	req.Header.Set(HeaderVersion, "latest")
	rec := httptest.NewRecorder()
	e.h.ServeHTTP(rec, req)
	if rec.Code != StatusClientClosedRequest {
		t.Errorf("status %d, want %d: %s", rec.Code, StatusClientClosedRequest, rec.Body)
	}
	if len(seen) != goneAt+1 {
		t.Errorf("%d of %d operations validated after the client left at op %d", len(seen), ops, goneAt)
	}
	if slices.Contains(e.cond.calls, "update_node") {
		t.Error("the conductor was asked to update the node for a client that had gone")
	}
}

// TestPatchPointerEscapes: RFC 6901 escapes only; ~2 or a trailing ~ is 400
// saying how to escape.
func TestPatchPointerEscapes(t *testing.T) {
	e := newEnv(t)
	id := e.node(nil)
	tests := map[string]struct {
		path string
		want int
		key  string
	}{
		"~0 is ~":        {"/extra/a~0b", http.StatusOK, "a~b"},
		"~1 is /":        {"/extra/a~1b", http.StatusOK, "a/b"},
		"~2":             {"/extra/a~2b", http.StatusBadRequest, ""},
		"trailing ~":     {"/extra/ab~", http.StatusBadRequest, ""},
		"~ before slash": {"/extra~/ab", http.StatusBadRequest, ""},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			r := e.do("PATCH", "/v1/nodes/"+id, "latest", `[{"op":"add","path":"`+tc.path+`","value":"v"}]`)
			if r.Code != tc.want {
				t.Fatalf("status %d, want %d: %s", r.Code, tc.want, r.Body)
			}
			if tc.want != http.StatusOK {
				if f := r.Fault(t); !strings.Contains(f, "~0") || !strings.Contains(f, "~1") {
					t.Errorf("fault %q does not say how to escape", f)
				}
				return
			}
			if v := r.JSON(t)["extra"].(map[string]any)[tc.key]; v != "v" {
				t.Errorf("extra[%q] = %v", tc.key, r.JSON(t)["extra"])
			}
		})
	}
}

// TestPatchNamesFailingOp: the 400 of an op that does not apply names that
// op (the first one, when several would fail), never its value.
func TestPatchNamesFailingOp(t *testing.T) {
	e := newEnv(t)
	id := e.node(map[string]any{"extra": map[string]any{"list": []any{1}}})
	for _, n := range []int{1, 2, 7, 64} {
		ops := strings.TrimSuffix(patchBody(n), "]")
		body := ops + `,{"op":"remove","path":"/extra/missing"},{"op":"replace","path":"/extra/list/5","value":"secret"}]`
		r := e.must(http.StatusBadRequest, "PATCH", "/v1/nodes/"+id, "latest", body)
		f := r.Fault(t)
		if !strings.Contains(f, `{"op":"remove","path":"/extra/missing"}`) || strings.Contains(f, "secret") {
			t.Errorf("after %d good ops: fault %q does not name the failing op alone", n, f)
		}
	}
}

// BenchmarkPatchTooManyOps is a 10,000-op PATCH (538 KB, under the body
// limit) of the kind that took 95 s of API CPU before the op cap: it is
// now refused with 400 after one scan of the body. cpu-ms/op is the
// process's CPU per request.
func BenchmarkPatchTooManyOps(b *testing.B) {
	benchPatch(b, 10000, http.StatusBadRequest)
}

// BenchmarkPatchMaxOps is a PATCH of DefaultMaxPatchOps adds, the largest
// accepted: the document is parsed and written once, not once per op.
func BenchmarkPatchMaxOps(b *testing.B) {
	benchPatch(b, DefaultMaxPatchOps, http.StatusOK)
}

// BenchmarkPatchLinear applies PATCHes of 500 to 10,000 adds with the cap
// raised out of the way: CPU per op stays flat (20, 55 and 254 cpu-ms/op
// on 2026-11-27; the code before used 348 ms for 500 ops and 4.5 s for
// 2,000, every op re-encoding and re-parsing the whole growing document).
func BenchmarkPatchLinear(b *testing.B) {
	for _, n := range []int{500, 2000, 10000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) { benchPatch(b, n, http.StatusOK, func(d *Deps) { d.MaxPatchOps = n }) })
	}
}

func benchPatch(b *testing.B, ops, want int, opts ...envOption) {
	e := newEnv(b, opts...)
	id := e.node(nil)
	body := patchBody(ops)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	cpu0, cpuOK := processCPU()
	for b.Loop() {
		req := httptest.NewRequest("PATCH", "http://rivet.test/v1/nodes/"+id, strings.NewReader(body))
		req.Header.Set(HeaderVersion, "latest")
		rec := httptest.NewRecorder()
		e.h.ServeHTTP(rec, req)
		if rec.Code != want {
			b.Fatalf("status %d, want %d: %.300s", rec.Code, want, rec.Body)
		}
	}
	if cpu1, ok := processCPU(); cpuOK && ok {
		// The whole process's CPU (GC included) per request: what the
		// server spends, whatever else the machine runs.
		b.ReportMetric(float64((cpu1-cpu0).Microseconds())/1000/float64(b.N), "cpu-ms/op")
	}
}
