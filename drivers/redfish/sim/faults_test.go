package sim

import (
	"context"
	"errors"
	"net"
	"net/http"
	"runtime"
	"sync"
	"testing"
	"time"
)

func TestLatency(t *testing.T) {
	tests := map[string]struct {
		opts    Options
		fault   Fault
		path    string
		atLeast time.Duration
	}{
		"global":             {Options{Systems: 2, Latency: 40 * time.Millisecond}, Fault{}, "/redfish/v1/", 40 * time.Millisecond},
		"per system":         {Options{Systems: 2}, Fault{Latency: 60 * time.Millisecond}, "/redfish/v1/Managers/BMC-node-1", 60 * time.Millisecond},
		"global plus system": {Options{Systems: 2, Latency: 20 * time.Millisecond}, Fault{Latency: 40 * time.Millisecond}, "/redfish/v1/Chassis/node-1", 60 * time.Millisecond},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			g := newRig(t, tc.opts)
			if err := g.sim.SetFault("node-1", tc.fault); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			g.get(tc.path).want(t, http.StatusOK, "")
			if took := time.Since(start); took < tc.atLeast {
				t.Errorf("answered in %v, want at least %v", took, tc.atLeast)
			}
		})
	}
}

// TestOneSystemBroken: a 500 fault on node-1 breaks every resource of node-1
// and nothing else; clearing it heals it.
func TestOneSystemBroken(t *testing.T) {
	g := newRig(t, Options{Systems: 3})
	if err := g.sim.SetFault("node-1", Fault{Status500: true}); err != nil {
		t.Fatal(err)
	}
	if got := g.state("node-1").Fault; !got.Status500 {
		t.Errorf("State.Fault = %+v", got)
	}
	broken := []string{"/redfish/v1/Systems/node-1", "/redfish/v1/Systems/node-1/Processors",
		"/redfish/v1/Managers/BMC-node-1", "/redfish/v1/Managers/BMC-node-1/VirtualMedia/Cd", "/redfish/v1/Chassis/node-1"}
	for _, p := range broken {
		g.get(p).want(t, http.StatusInternalServerError, "InternalError")
	}
	for _, p := range []string{"/redfish/v1/", "/redfish/v1/Systems", "/redfish/v1/Systems/node-0",
		"/redfish/v1/Managers/BMC-node-2", "/redfish/v1/Chassis/node-0"} {
		g.get(p).want(t, http.StatusOK, "")
	}
	if err := g.sim.SetFault("node-1", Fault{}); err != nil {
		t.Fatal(err)
	}
	for _, p := range broken {
		g.get(p).want(t, http.StatusOK, "")
	}
	if err := g.sim.SetFault("node-7", Fault{Hang: true}); !errors.Is(err, ErrUnknownSystem) {
		t.Errorf("SetFault on an unknown system: %v", err)
	}
}

// TestErrorRateIsSeeded: the same seed fails the same requests; another seed
// fails others; rate 1 fails everything, the service root included.
func TestErrorRateIsSeeded(t *testing.T) {
	statuses := func(o Options) []int {
		g := newRig(t, o)
		out := make([]int, 40)
		for i := range out {
			r := g.get("/redfish/v1/Systems/node-0")
			if r.status == http.StatusInternalServerError {
				r.want(t, http.StatusInternalServerError, "InternalError")
			}
			out[i] = r.status
		}
		return out
	}
	a := statuses(Options{ErrorRate: 0.5, Seed: 11})
	b := statuses(Options{ErrorRate: 0.5, Seed: 11})
	c := statuses(Options{ErrorRate: 0.5, Seed: 12})
	fails := 0
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("same seed, different outcomes:\n%v\n%v", a, b)
		}
		if a[i] == 500 {
			fails++
		}
	}
	if fails == 0 || fails == len(a) {
		t.Errorf("rate 0.5 failed %d of %d", fails, len(a))
	}
	if equalInts(a, c) {
		t.Errorf("seeds 11 and 12 failed the same requests: %v", a)
	}
	for _, s := range statuses(Options{ErrorRate: 1}) {
		if s != 500 {
			t.Fatalf("rate 1 let a request through")
		}
	}
}

func equalInts(a, b []int) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return len(a) == len(b)
}

// TestHangHonoursClientDeadline: a hung system makes its client time out
// while the others answer.
func TestHangHonoursClientDeadline(t *testing.T) {
	g := newRig(t, Options{Systems: 2})
	if err := g.sim.SetFault("node-1", Fault{Hang: true}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, g.base+"/redfish/v1/Systems/node-1", nil)
	req.SetBasicAuth(DefaultUsername, DefaultPassword)
	start := time.Now()
	res, err := g.hc.Do(req)
	if err == nil {
		res.Body.Close()
		t.Fatalf("hung system answered %d", res.StatusCode)
	}
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) < 100*time.Millisecond {
		t.Errorf("err %v after %v, want the client's deadline", err, time.Since(start))
	}
	g.get("/redfish/v1/Systems/node-0").want(t, http.StatusOK, "")
}

// TestCloseReleasesHungRequests: requests hung by HangRate return when the
// simulator closes, Serve returns, and no goroutine is left behind.
func TestCloseReleasesHungRequests(t *testing.T) {
	for _, how := range []string{"Close", "cancel"} {
		t.Run(how, func(t *testing.T) {
			before := runtime.NumGoroutine()
			s, err := New(Options{HangRate: 1})
			if err != nil {
				t.Fatal(err)
			}
			l, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			served := make(chan error, 1)
			go func() { served <- s.Serve(ctx, l) }()

			client := &http.Client{Transport: &http.Transport{}}
			const n = 5
			var wg sync.WaitGroup
			for range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					res, err := client.Get("http://" + l.Addr().String() + "/redfish/v1/")
					if err == nil {
						res.Body.Close()
					}
				}()
			}
			waitFor(t, func() bool { return s.hanging.Load() == n })
			if how == "Close" {
				_ = s.Close()
			} else {
				cancel()
			}
			wg.Wait()
			if err := <-served; err != nil {
				t.Errorf("Serve: %v", err)
			}
			client.CloseIdleConnections()
			_ = s.Close()
			waitFor(t, func() bool { return runtime.NumGoroutine() <= before+2 })
		})
	}
}

// waitFor polls cond for up to five seconds.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if cond() {
			return
		}
	}
	buf := make([]byte, 1<<16)
	t.Fatalf("condition not met in 5s; goroutines: %d\n%s", runtime.NumGoroutine(), buf[:runtime.Stack(buf, true)])
}

func TestOptionsValidate(t *testing.T) {
	tests := map[string]Options{
		"negative systems":   {Systems: -1},
		"error rate > 1":     {ErrorRate: 1.5},
		"rates sum > 1":      {ErrorRate: 0.6, HangRate: 0.6},
		"negative latency":   {Latency: -time.Second},
		"negative limit":     {SessionLimit: -1},
		"negative settle":    {PowerSettle: -1},
		"too many systems":   {Systems: MaxSystems + 1},
		"negative hang rate": {HangRate: -0.1},
	}
	for name, o := range tests {
		t.Run(name, func(t *testing.T) {
			if _, err := New(o); err == nil {
				t.Errorf("New(%+v) accepted", o)
			}
		})
	}
	if _, err := New(Options{}); err != nil {
		t.Errorf("zero Options: %v", err)
	}
}
