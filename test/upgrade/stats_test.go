package upgrade

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"text/tabwriter"
	"time"
)

// recorder counts the client requests of a run per upgrade step.
type recorder struct {
	mu       sync.Mutex
	cur      *stepStats
	steps    []*stepStats
	failures []string // every failed request, described
	// fault names the fault being injected now ("" for none): requests
	// that fail as it explains (writes not acknowledged) count apart.
	fault     string
	faultEnd  time.Time // when the last fault ended
	explained []string  // every request the fault explains, described
	// cut: the fault may cut calls in flight (a conductor killed); the
	// 500s it may explain wait in suspects until settle decides.
	cut      bool
	suspects []suspectCall
	version  string // the load's microversion, shown per step
	// kinds counts requests per kind (method and route, identifiers
	// taken out), so each request the load makes shows by name.
	kinds map[string]*kindStats
}

// kindStats are the figures of one request kind over the run.
type kindStats struct{ requests, failed int }

// stepStats are the figures of one step. A request counts in the step it
// started in; its latency includes its retries.
type stepStats struct {
	name                      string
	start                     time.Time
	took                      time.Duration // from the step's start to the next's
	requests, retries, errors int
	unacked                   int    // writes a fault left unacknowledged (not errors)
	version                   string // the load's microversion when the step began
	lat                       []time.Duration
}

// begin starts a new step: requests from now on count in it.
func (r *recorder) begin(name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := time.Now()
	if r.cur != nil {
		r.cur.took = now.Sub(r.cur.start)
	}
	r.cur = &stepStats{name: name, start: now, version: r.version}
	r.steps = append(r.steps, r.cur)
}

// setVersion notes the load's microversion from now on.
func (r *recorder) setVersion(v string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.version = v
	if r.cur != nil && r.cur.requests == 0 {
		r.cur.version = v
	} else if r.cur != nil && r.cur.version != v {
		r.cur.version += "→" + v
	}
}

// suspectCall is a failed write that an injected fault may explain.
type suspectCall struct {
	s       *stepStats
	took    time.Duration
	failure string
}

// cutCalls reports whether the fault now may cut calls in flight.
func (r *recorder) cutCalls() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.cut
}

// suspect holds a failed write until settle.
func (r *recorder) suspect(s *stepStats, took time.Duration, failure string) {
	r.mu.Lock()
	r.suspects = append(r.suspects, suspectCall{s, took, failure})
	r.mu.Unlock()
}

// settle records the held writes: the first explainable of them as
// unacknowledged, the rest as errors. It returns how many there were.
func (r *recorder) settle(explainable int) int {
	r.mu.Lock()
	sus := r.suspects
	r.suspects, r.cut = nil, false
	r.mu.Unlock()
	for i, c := range sus {
		r.doneIn(c.s, c.took, c.failure, i < explainable)
	}
	return len(sus)
}

// faultBegins and faultEnds bracket an injected fault.
func (r *recorder) faultBegins(name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.fault = name
}

func (r *recorder) faultEnds() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.fault = ""
	r.faultEnd = time.Now()
}

// faultLately reports whether a fault is injected now or ended within d:
// an operation the fault cut short (a deploy whose conductor was killed)
// may be seen to fail a little later.
func (r *recorder) faultLately(d time.Duration) (string, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.fault != "" {
		return r.fault, true
	}
	return "a fault that just ended", !r.faultEnd.IsZero() && time.Since(r.faultEnd) < d
}

func (r *recorder) inFault() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.fault != ""
}

// end closes the last step.
func (r *recorder) end() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cur != nil && r.cur.took == 0 {
		r.cur.took = time.Since(r.cur.start)
	}
}

func (r *recorder) step() *stepStats {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cur == nil {
		r.cur = &stepStats{name: "-", start: time.Now()}
		r.steps = append(r.steps, r.cur)
	}
	return r.cur
}

// kindDone counts a request of kind; failed: not answered as wanted
// (an error or a write a fault left unacknowledged).
func (r *recorder) kindDone(kind string, failed bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.kinds == nil {
		r.kinds = map[string]*kindStats{}
	}
	k := r.kinds[kind]
	if k == nil {
		k = &kindStats{}
		r.kinds[kind] = k
	}
	k.requests++
	if failed {
		k.failed++
	}
}

// kindOf names a request by its method and route: path segments that
// identify one object (UUIDs, traits, numbers) become placeholders and
// the query is dropped.
func kindOf(method, path string) string {
	path, _, _ = strings.Cut(path, "?")
	segs := strings.Split(path, "/")
	for i, s := range segs {
		switch {
		case uuidOnlyRE.MatchString(s):
			segs[i] = "{uuid}"
		case strings.HasPrefix(s, "CUSTOM_"):
			segs[i] = "{trait}"
		case s != "" && strings.Trim(s, "0123456789") == "":
			segs[i] = "{n}"
		}
	}
	return method + " " + strings.Join(segs, "/")
}

var uuidOnlyRE = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// kindTable prints one line per request kind, sorted by name.
func (r *recorder) kindTable(w io.Writer) {
	r.mu.Lock()
	defer r.mu.Unlock()
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "request\trequests\tfailed\t")
	for _, name := range slices.Sorted(maps.Keys(r.kinds)) {
		k := r.kinds[name]
		fmt.Fprintf(tw, "%s\t%d\t%d\t\n", name, k.requests, k.failed)
	}
	tw.Flush()
}

func (r *recorder) retried(s *stepStats) {
	r.mu.Lock()
	s.retries++
	r.mu.Unlock()
}

// done records one request's outcome; failure describes a failed one.
func (r *recorder) done(s *stepStats, took time.Duration, failure string) {
	r.doneIn(s, took, failure, false)
}

// doneIn is done for a request a fault may explain: a failure it explains
// counts as unacknowledged, not as an error.
func (r *recorder) doneIn(s *stepStats, took time.Duration, failure string, faultExplains bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s.requests++
	s.lat = append(s.lat, took)
	switch {
	case failure == "":
	case faultExplains:
		s.unacked++
		r.explained = append(r.explained, "step "+s.name+" ("+cmp.Or(r.fault, "just after a fault")+"): "+failure)
	default:
		s.errors++
		r.failures = append(r.failures, "step "+s.name+": "+failure)
	}
}

// totals sums every step.
func (r *recorder) totals() (requests, retries, errors int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, s := range r.steps {
		requests, retries, errors = requests+s.requests, retries+s.retries, errors+s.errors
	}
	return
}

// percentile returns the p-th percentile (0 < p <= 100) of sorted
// durations, by the nearest-rank method; 0 for none.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(float64(len(sorted))*p/100 + 0.999999)
	return sorted[min(max(rank, 1), len(sorted))-1]
}

// table prints one line per step: requests, retries, errors, p50, p99.
func (r *recorder) table(w io.Writer) {
	r.mu.Lock()
	defer r.mu.Unlock()
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "step\tAPI\tseconds\trequests\tretries\terrors\tunacked\tp50 ms\tp99 ms\t")
	var all []time.Duration
	var req, ret, errs, unacked int
	for _, s := range r.steps {
		lat := slices.Clone(s.lat)
		slices.Sort(lat)
		all = append(all, lat...)
		req, ret, errs, unacked = req+s.requests, ret+s.retries, errs+s.errors, unacked+s.unacked
		fmt.Fprintf(tw, "%s\t%s\t%.1f\t%d\t%d\t%d\t%d\t%s\t%s\t\n", s.name, s.version, s.took.Seconds(), s.requests, s.retries, s.errors,
			s.unacked, ms(percentile(lat, 50)), ms(percentile(lat, 99)))
	}
	slices.Sort(all)
	fmt.Fprintf(tw, "total\t\t\t%d\t%d\t%d\t%d\t%s\t%s\t\n", req, ret, errs, unacked, ms(percentile(all, 50)), ms(percentile(all, 99)))
	tw.Flush()
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f", float64(d)/float64(time.Millisecond)) }

func TestPercentile(t *testing.T) {
	var ds []time.Duration
	for i := 1; i <= 100; i++ {
		ds = append(ds, time.Duration(i)*time.Millisecond)
	}
	for _, c := range []struct {
		p    float64
		want time.Duration
	}{{50, 50 * time.Millisecond}, {99, 99 * time.Millisecond}, {100, 100 * time.Millisecond}, {1, time.Millisecond}} {
		if got := percentile(ds, c.p); got != c.want {
			t.Errorf("percentile(1..100 ms, %v) = %v, want %v", c.p, got, c.want)
		}
	}
	if got := percentile(ds[:1], 99); got != time.Millisecond {
		t.Errorf("percentile of one = %v", got)
	}
	if got := percentile(nil, 50); got != 0 {
		t.Errorf("percentile of none = %v", got)
	}
}

func TestRecorderTable(t *testing.T) {
	var r recorder
	r.begin("0")
	s := r.step()
	r.done(s, 10*time.Millisecond, "")
	r.retried(s)
	r.done(s, 30*time.Millisecond, "")
	r.begin("1.1")
	r.done(r.step(), 20*time.Millisecond, "PATCH /v1/nodes/x: HTTP 500")
	r.end()
	var b strings.Builder
	r.table(&b)
	out := b.String()
	for _, want := range []string{"step", "1.1", "total"} {
		if !strings.Contains(out, want) {
			t.Fatalf("table lacks %q:\n%s", want, out)
		}
	}
	if req, ret, errs := r.totals(); req != 3 || ret != 1 || errs != 1 {
		t.Fatalf("totals = %d requests, %d retries, %d errors; want 3, 1, 1", req, ret, errs)
	}
	if len(r.failures) != 1 || !strings.Contains(r.failures[0], "step 1.1: PATCH") {
		t.Fatalf("failures = %q", r.failures)
	}
}

// Failed writes held during a fault that may cut calls: the first ones the
// API logs explain count as unacknowledged, the rest as errors; and the
// log lines that explain them.
func TestSettleSuspects(t *testing.T) {
	var r recorder
	r.begin("kill -9")
	r.faultBegins("conductor killed")
	r.cut = true
	for range 3 {
		r.suspect(r.step(), time.Millisecond, "PATCH /v1/nodes/x: HTTP 500")
	}
	if n := r.settle(2); n != 3 {
		t.Fatalf("settle = %d, want 3", n)
	}
	r.faultEnds()
	if req, _, errs := r.totals(); req != 3 || errs != 1 || len(r.explained) != 2 || r.cutCalls() {
		t.Fatalf("after settle(2) of 3: %d requests, %d errors, %d explained, cut %v; want 3, 1, 2, false", req, errs, len(r.explained), r.cutCalls())
	}
	log := strings.Join([]string{
		`level=ERROR msg="request failed" method=PATCH error="rpc update_node to 127.0.0.1:4000: unexpected EOF"`,
		`level=ERROR msg="request failed" method=PATCH error="rpc update_node to 127.0.0.1:4000: read: connection reset by peer"`,
		`level=ERROR msg="request failed" method=PATCH error="conductor 127.0.0.1:4000 unreachable: connect: connection refused"`,
		`level=ERROR msg="request failed" method=PATCH error="rpc update_node to 127.0.0.1:5000: unexpected EOF"`,
		`level=INFO msg=request method=PATCH status=200 conductor=127.0.0.1:4000 EOF`,
	}, "\n")
	if got := cutCallsLogged(log, "127.0.0.1:4000"); got != 2 {
		t.Fatalf("cutCallsLogged = %d, want 2 (an EOF and a reset to the killed host; not a refused dial, another host or a success)", got)
	}
}

// Request kinds name the route, not the object.
func TestKindOf(t *testing.T) {
	for path, want := range map[string]string{
		"/v1/nodes/6f1c2a8e-1b0e-4c3f-9a55-0d7f1e2b3c4d/traits/CUSTOM_UPGRADE_3": "PUT /v1/nodes/{uuid}/traits/{trait}",
		"/v1/nodes?limit=40": "PUT /v1/nodes",
		"/v1/allocations/6f1c2a8e-1b0e-4c3f-9a55-0d7f1e2b3c4d": "PUT /v1/allocations/{uuid}",
		"/v1/nodes/detail": "PUT /v1/nodes/detail",
	} {
		if got := kindOf("PUT", path); got != want {
			t.Errorf("kindOf(PUT, %s) = %q, want %q", path, got, want)
		}
	}
	var rec recorder
	rec.kindDone("GET /v1/allocations", false)
	rec.kindDone("GET /v1/allocations", true)
	var b strings.Builder
	rec.kindTable(&b)
	if !strings.Contains(b.String(), "GET /v1/allocations") || !strings.Contains(b.String(), "2") {
		t.Errorf("kind table:\n%s", b.String())
	}
}
