package ipmi

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bougou/go-ipmi/pkg/client"

	"github.com/rivetmetal/rivet/plugins"
)

// pooled returns the go-ipmi client the driver holds for b, or nil.
func pooled(t *testing.T, d *Driver, b *testBMC) *client.Client {
	t.Helper()
	s, err := d.pool.get(b.node(nil).DriverInfo[KeyAddress].(string) + ":" + itoa(b.port))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.lock(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	defer s.unlock()
	return s.client
}

// TestSessionReuse: consecutive calls share one session; new credentials,
// an idle session and a BMC restart each give a new one, transparently.
func TestSessionReuse(t *testing.T) {
	tests := map[string]struct {
		opts    Options
		between func(t *testing.T, b *testBMC)
		second  plugins.DriverInfo
		reused  bool
	}{
		"same credentials":    {reused: true},
		"password changed":    {second: plugins.DriverInfo{KeyPassword: testPassword + "!"}},
		"idle past timeout":   {opts: Options{SessionIdleTimeout: 50 * time.Millisecond}, between: func(*testing.T, *testBMC) { time.Sleep(120 * time.Millisecond) }},
		"BMC restarted":       {between: func(t *testing.T, b *testBMC) { b.restart(t) }},
		"timeout per attempt": {second: plugins.DriverInfo{KeyTimeout: 1.5}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			b := startBMC(t, bmcConfig{})
			d := newDriver(t, tc.opts)
			if _, err := d.GetPowerState(testCtx(t), b.node(nil)); err != nil {
				t.Fatal(err)
			}
			first := pooled(t, d, b)
			if tc.between != nil {
				tc.between(t, b)
			}
			_, err := d.GetPowerState(testCtx(t), b.node(tc.second))
			if name == "password changed" { // the BMC refuses it, and the old session is gone
				if !errors.Is(err, plugins.ErrInvalidDriverInfo) {
					t.Fatalf("second call: %v, want ErrInvalidDriverInfo", err)
				}
			} else if err != nil {
				t.Fatalf("second call: %v", err)
			}
			if got := pooled(t, d, b); (got == first) != tc.reused {
				t.Errorf("session reused = %v, want %v", got == first, tc.reused)
			}
		})
	}
}

// driverGoroutines counts go-ipmi keepalive goroutines and session reapers.
func driverGoroutines() int {
	buf := make([]byte, 1<<20)
	stacks := string(buf[:runtime.Stack(buf, true)])
	return strings.Count(stacks, "(*Client).keepSessionAlive") + strings.Count(stacks, "(*pool).reap")
}

// TestCloseReleasesEverything: after Close no go-ipmi keepalive goroutine
// and no reaper is left, and calls fail with ErrClosed.
func TestCloseReleasesEverything(t *testing.T) {
	bmcs := []*testBMC{startBMC(t, bmcConfig{}), startBMC(t, bmcConfig{}), startBMC(t, bmcConfig{})}
	// The drivers of earlier tests were closed, but their goroutines end
	// on their own time: one counted here and gone a moment later made
	// the count below one short under CI's load. Let them end first.
	for deadline := time.Now().Add(5 * time.Second); driverGoroutines() > 0 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	before := driverGoroutines()
	d := New(nil, Options{})
	for _, b := range bmcs {
		if _, err := d.GetPowerState(testCtx(t), b.node(nil)); err != nil {
			t.Fatal(err)
		}
	}
	if during := driverGoroutines(); during != before+len(bmcs)+1 {
		t.Fatalf("%d keepalives and reapers with %d sessions open, %d before: want one keepalive per session and a reaper", during, len(bmcs), before)
	}
	if err := d.Close(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for driverGoroutines() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if after := driverGoroutines(); after > before {
		t.Errorf("%d keepalives and reapers left after Close, %d before", after, before)
	}
	if _, err := d.GetPowerState(testCtx(t), bmcs[0].node(nil)); !errors.Is(err, ErrClosed) {
		t.Errorf("call after Close: %v, want ErrClosed", err)
	}
}

// TestReaperClosesIdleSessions: a session idle past SessionIdleTimeout is
// closed by the reaper, releasing its keepalive goroutine.
func TestReaperClosesIdleSessions(t *testing.T) {
	b := startBMC(t, bmcConfig{})
	d := newDriver(t, Options{SessionIdleTimeout: 40 * time.Millisecond})
	if _, err := d.GetPowerState(testCtx(t), b.node(nil)); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for pooled(t, d, b) != nil && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if pooled(t, d, b) != nil {
		t.Error("idle session still open after 5s")
	}
}

// TestPerBMCSerialisationAndPacing: concurrent calls to one BMC all
// succeed (go-ipmi allows one exchange per client) and are spaced by the
// minimum interval: n calls take no less than (n-1) intervals.
func TestPerBMCSerialisationAndPacing(t *testing.T) {
	b := startBMC(t, bmcConfig{})
	d := newDriver(t, Options{})
	const calls, interval = 8, 25 * time.Millisecond
	n := b.node(plugins.DriverInfo{KeyMinCommandInterval: interval.Seconds()})
	if _, err := d.GetPowerState(testCtx(t), n); err != nil { // open the session first
		t.Fatal(err)
	}
	start := time.Now()
	var wg sync.WaitGroup
	errs := make([]error, calls)
	for i := range calls {
		wg.Go(func() { _, errs[i] = d.GetPowerState(testCtx(t), n) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took < calls*interval {
		t.Errorf("%d paced calls took %v, want at least %v", calls, took, calls*interval)
	}
}

// TestWaitForBMCHonoursContext: a caller queued behind a long command
// gives up when its ctx ends instead of waiting forever.
func TestWaitForBMCHonoursContext(t *testing.T) {
	b := startBMC(t, bmcConfig{})
	d := newDriver(t, Options{})
	n := b.node(nil)
	s, _ := d.pool.get("127.0.0.1:" + itoa(b.port))
	if err := s.lock(testCtx(t)); err != nil { // hold the BMC as a long command would
		t.Fatal(err)
	}
	defer s.unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := d.GetPowerState(ctx, n); !errors.Is(err, context.DeadlineExceeded) || !plugins.IsRetryable(err) {
		t.Errorf("queued call: %v, want retryable deadline exceeded", err)
	}
}
