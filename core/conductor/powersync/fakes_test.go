package powersync

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"
)

// nodes returns n nodes, "node-00000"…, powered on, with BMC keys given by
// bmc(i).
func nodes(n int, bmc func(i int) string) []Node {
	out := make([]Node, n)
	for i := range out {
		out[i] = Node{UUID: fmt.Sprintf("node-%05d", i), BMC: bmc(i), PowerState: "power on"}
	}
	return out
}

// ownBMC gives every node its own BMC.
func ownBMC(i int) string { return fmt.Sprintf("bmc-%05d", i) }

// fakeSource lists a fixed set of nodes; PowerChanged updates it as the
// conductor's DB would.
type fakeSource struct {
	mu    sync.Mutex
	nodes []Node
}

func (s *fakeSource) Nodes(ctx context.Context, add func(Node)) error {
	s.mu.Lock()
	ns := slices.Clone(s.nodes)
	s.mu.Unlock()
	for _, n := range ns {
		add(n)
	}
	return nil
}

func (s *fakeSource) setRecorded(uuid, state string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range s.nodes {
		if s.nodes[i].UUID == uuid {
			s.nodes[i].PowerState = state
		}
	}
}

// fakeBMCs answers probes after latency with each node's actual state
// ("power on" unless set) and records concurrency and timing.
type fakeBMCs struct {
	latency time.Duration

	mu sync.Mutex
	// actual power state by node UUID.
	actual map[string]string
	// failing BMC keys answer with their error at once.
	failing map[string]error
	// custom replaces the behaviour for a node UUID.
	custom map[string]func(ctx context.Context) (string, error)

	inflight, maxPerBMC map[string]int
	global, maxGlobal   int
	starts, ends        map[string][]time.Time
}

func newFakeBMCs(latency time.Duration) *fakeBMCs {
	return &fakeBMCs{
		latency: latency,
		actual:  map[string]string{}, failing: map[string]error{},
		custom:   map[string]func(context.Context) (string, error){},
		inflight: map[string]int{}, maxPerBMC: map[string]int{},
		starts: map[string][]time.Time{}, ends: map[string][]time.Time{},
	}
}

func (f *fakeBMCs) GetPowerState(ctx context.Context, n Node) (string, error) {
	f.mu.Lock()
	f.inflight[n.BMC]++
	f.maxPerBMC[n.BMC] = max(f.maxPerBMC[n.BMC], f.inflight[n.BMC])
	f.global++
	f.maxGlobal = max(f.maxGlobal, f.global)
	f.starts[n.UUID] = append(f.starts[n.UUID], time.Now())
	custom, failErr := f.custom[n.UUID], f.failing[n.BMC]
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		f.inflight[n.BMC]--
		f.global--
		f.ends[n.UUID] = append(f.ends[n.UUID], time.Now())
		f.mu.Unlock()
	}()
	switch {
	case custom != nil:
		return custom(ctx)
	case failErr != nil:
		return "", failErr
	}
	if err := sleep(ctx, f.latency); err != nil {
		return "", err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if s, ok := f.actual[n.UUID]; ok {
		return s, nil
	}
	return "power on", nil
}

func (f *fakeBMCs) set(fn func(f *fakeBMCs)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn(f)
}

// probes returns how many probes each node got.
func (f *fakeBMCs) probes() map[string]int {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[string]int{}
	for uuid, s := range f.starts {
		out[uuid] = len(s)
	}
	return out
}

// startedAfter counts probes started after t.
func (f *fakeBMCs) startedAfter(t time.Time) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, ss := range f.starts {
		for _, s := range ss {
			if s.After(t) {
				n++
			}
		}
	}
	return n
}

// sleep waits d or until ctx ends, like a driver honouring its deadline.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

type change struct{ UUID, From, To string }

type failure struct {
	UUID        string
	Consecutive int
}

// fakeRecorder keeps what it is told and applies changes to its source.
type fakeRecorder struct {
	src *fakeSource

	mu         sync.Mutex
	failWrites int // fail this many PowerChanged calls
	changes    []change
	failures   []failure
	errs       []error
	recovered  map[string]int
	cycles     []Stats
}

func newFakeRecorder(src *fakeSource) *fakeRecorder {
	return &fakeRecorder{src: src, recovered: map[string]int{}}
}

func (r *fakeRecorder) PowerChanged(ctx context.Context, n Node, observed string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.changes = append(r.changes, change{n.UUID, n.PowerState, observed})
	if r.failWrites > 0 {
		r.failWrites--
		return errors.New("database is locked")
	}
	r.src.setRecorded(n.UUID, observed)
	return nil
}

func (r *fakeRecorder) ProbeFailed(ctx context.Context, n Node, err error, consecutive int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failures = append(r.failures, failure{n.UUID, consecutive})
	r.errs = append(r.errs, err)
}

func (r *fakeRecorder) ProbeRecovered(ctx context.Context, n Node, failures int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.recovered[n.UUID] = failures
}

func (r *fakeRecorder) CycleDone(ctx context.Context, s Stats) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.cycles = append(r.cycles, s)
}

func (r *fakeRecorder) stats() []Stats {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.cycles)
}

// rig is a scheduler wired to fakes.
type rig struct {
	src  *fakeSource
	bmcs *fakeBMCs
	rec  *fakeRecorder
	s    *Scheduler
}

func newRig(t *testing.T, cfg Config, ns []Node, latency time.Duration, runner Runner) *rig {
	t.Helper()
	r := &rig{src: &fakeSource{nodes: ns}, bmcs: newFakeBMCs(latency)}
	r.rec = newFakeRecorder(r.src)
	s, err := New(cfg, Deps{Source: r.src, Prober: r.bmcs, Recorder: r.rec, Runner: runner})
	if err != nil {
		t.Fatal(err)
	}
	r.s = s
	return r
}

// testConfig is a config with the breaker off and no spread.
func testConfig(workers int) Config {
	return Config{Interval: time.Minute, Workers: workers, CallTimeout: 5 * time.Second}
}
