package sim

import (
	"context"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Fault makes one system misbehave; the zero Fault is a healthy system.
// It applies to every request under that system's System, Manager and
// Chassis resources, on top of the global Options faults.
type Fault struct {
	// Latency delays each answer by this much.
	Latency time.Duration
	// Status500 answers every request with a 500 InternalError.
	Status500 bool
	// Hang never answers until the client gives up or the simulator stops.
	Hang bool
}

// SetFault sets (or, with the zero Fault, clears) the fault of one system at
// run time; the other systems are unaffected.
func (s *Simulator) SetFault(id string, f Fault) error {
	i, ok := s.index(id)
	if !ok {
		return ErrUnknownSystem
	}
	if f == (Fault{}) {
		s.systems[i].fault.Store(nil)
		return nil
	}
	s.systems[i].fault.Store(&f)
	return nil
}

// faultDrawer hands out the random draws behind ErrorRate and HangRate from
// one seeded generator, so a run with the same seed and the same request
// order fails the same requests.
type faultDrawer struct {
	mu  sync.Mutex
	rng *rand.Rand
}

func (d *faultDrawer) init(seed uint64) {
	d.rng = rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
}

func (d *faultDrawer) draw() float64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.rng.Float64()
}

// withFaults applies latency, hangs and injected 500s before anything else,
// as a slow or wedged BMC is slow for every request, authenticated or not.
func (s *Simulator) withFaults(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var f Fault
		if i, ok := s.systemOfPath(r.URL.Path); ok {
			s.systems[i].requests.Add(1)
			if p := s.systems[i].fault.Load(); p != nil {
				f = *p
			}
		}
		if d := s.opts.Latency + f.Latency; d > 0 && !s.wait(r.Context(), d) {
			writeError(w, errShuttingDown())
			return
		}
		hang, fail := f.Hang, f.Status500
		if !hang && !fail && s.opts.ErrorRate+s.opts.HangRate > 0 {
			u := s.faults.draw()
			hang = u < s.opts.HangRate
			fail = !hang && u < s.opts.HangRate+s.opts.ErrorRate
		}
		switch {
		case hang:
			s.hanging.Add(1)
			s.wait(r.Context(), -1)
			s.hanging.Add(-1)
			writeError(w, errShuttingDown()) // nobody may be listening any more
		case fail:
			writeError(w, errInternal("injected fault"))
		default:
			next.ServeHTTP(w, r)
		}
	})
}

// wait sleeps for d (forever when d < 0) and reports whether it slept the
// whole time; the request ending or Close cut it short.
func (s *Simulator) wait(ctx context.Context, d time.Duration) bool {
	var elapsed <-chan time.Time
	if d >= 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		elapsed = t.C
	}
	select {
	case <-elapsed:
		return true
	case <-ctx.Done():
	case <-s.done:
	}
	return false
}

// systemOfPath finds the system a resource path belongs to, if any.
func (s *Simulator) systemOfPath(p string) (int, bool) {
	rest, ok := strings.CutPrefix(p, "/redfish/v1/")
	if !ok {
		return 0, false
	}
	kind, rest, _ := strings.Cut(rest, "/")
	id, _, _ := strings.Cut(rest, "/")
	switch kind {
	case "Systems", "Chassis":
	case "Managers":
		if id, ok = strings.CutPrefix(id, "BMC-"); !ok {
			return 0, false
		}
	default:
		return 0, false
	}
	return s.index(id)
}
