package upgrade

import (
	"strings"
	"syscall"
	"time"
)

// killConductor kills the second conductor with SIGKILL under load (no
// drain, no offline mark, its calls in flight cut) and starts it again
// with the same binary and pin. Its driver plugins must exit with it.
// Writes that fail while it is down count as not acknowledged: the fault
// explains them (faultRetries); a 500 or a lost acknowledged write is an
// error.
func (r *run) killConductor() {
	t := r.t
	t.Helper()
	s := r.d.conductors[1]
	r.d.notePlugins(s)
	kids, _ := children(s.p.pid())
	r.rec.faultBegins("conductor killed")
	r.rec.mu.Lock()
	r.rec.cut = true
	r.rec.mu.Unlock()
	defer r.rec.faultEnds()
	logged := map[*service]int{}
	for _, a := range r.d.apis {
		logged[a] = len(a.p.log.String())
	}
	defer func() {
		// A 500 for a write is explained only by a call the kill cut
		// (the API logged an RPC to the killed conductor failing after it
		// was sent: EOF, a reset connection); one it refused to dial must
		// be a 503, since nothing was done.
		cut := 0
		for _, a := range r.d.apis {
			cut += cutCallsLogged(a.p.log.String()[logged[a]:], s.registered)
		}
		if n := r.rec.settle(cut); n > 0 {
			t.Logf("%d writes answered 500 while %s was killed; the APIs logged %d calls to it cut in flight", n, s.name, cut)
		}
	}()
	start := time.Now()
	if err := s.p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-s.p.done
	waitFor(t, 10*time.Second, s.name+"'s plugins exiting with it", func() bool {
		for _, k := range kids {
			if k.alive() {
				return false
			}
		}
		return true
	})
	s.start()
	t.Logf("%s killed with SIGKILL and serving again %v later", s.name, time.Since(start).Round(time.Millisecond))
	// The leases it held when killed stay until they expire and a takeover
	// check frees their nodes (NodeLocked meanwhile, retried): the fault
	// lasts that long.
	time.Sleep(max(dwell, leaseDuration+2*2*time.Second-time.Since(start)))
}

// restartDatabase restarts the run's own PostgreSQL server under load
// (pg_ctl stop -m fast, a second down, start), as an operator does.
func (r *run) restartDatabase() {
	t := r.t
	t.Helper()
	if r.d.pg == nil {
		t.Fatal("the database restart needs a server of the test's own")
	}
	r.rec.faultBegins("database restarted")
	defer r.rec.faultEnds()
	start := time.Now()
	r.d.pg.Stop(t)
	time.Sleep(time.Second)
	r.d.pg.Start(t)
	t.Logf("database down and up again in %v", time.Since(start).Round(time.Millisecond))
	time.Sleep(dwell)
}

// cutCallsLogged counts the requests an API log shows failing because an
// RPC call to host was cut after it was sent (not a refused dial).
func cutCallsLogged(log, host string) int {
	n := 0
	for _, line := range strings.Split(log, "\n") {
		if strings.Contains(line, `msg="request failed"`) && strings.Contains(line, host) &&
			!strings.Contains(line, "unreachable") &&
			(strings.Contains(line, "EOF") || strings.Contains(line, "connection reset") || strings.Contains(line, "broken pipe")) {
			n++
		}
	}
	return n
}
