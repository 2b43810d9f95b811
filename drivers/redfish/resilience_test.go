package redfish_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rivetmetal/rivet/drivers/redfish"
	"github.com/rivetmetal/rivet/drivers/redfish/sim"
	"github.com/rivetmetal/rivet/plugins"
)

// TestHungBMC: a BMC that never answers makes the call fail with a
// retryable ErrBMCUnreachable once connection_timeout has passed, well
// before the caller's deadline, while another BMC (and a healthy system on
// the same endpoint) keeps answering.
func TestHungBMC(t *testing.T) {
	hung := startSim(t, sim.Options{Systems: 2})
	healthy := startSim(t, sim.Options{})
	if err := hung.SetFault("node-0", sim.Fault{Hang: true}); err != nil {
		t.Fatal(err)
	}
	opts := testOptions()
	opts.ConnectionTimeout = 300 * time.Millisecond
	d := newDriver(t, opts)

	caller, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	var hungErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		_, hungErr = d.GetPowerState(caller, node(hung, "node-0"))
	}()
	for range 5 { // meanwhile, the other BMC answers
		_, err := d.GetPowerState(ctx(t), node(healthy, "node-0"))
		must(t, "healthy BMC", err)
	}
	wg.Wait()
	noSecret(t, hungErr)
	if !errors.Is(hungErr, plugins.ErrBMCUnreachable) || !plugins.IsRetryable(hungErr) {
		t.Fatalf("hung BMC: %v (retryable %v), want retryable ErrBMCUnreachable", hungErr, plugins.IsRetryable(hungErr))
	}
	if caller.Err() != nil {
		t.Error("the call outlived the caller's deadline instead of its own timeout")
	}
	_, err := d.GetPowerState(ctx(t), node(hung, "node-1"))
	must(t, "healthy system behind the hung one's endpoint", err)
}

// TestFailingBMC: a BMC answering 500s gives an error naming the driver,
// node, BMC and operation; after BreakerThreshold failures the breaker
// opens and calls fail fast without reaching the BMC (other systems are
// unaffected); once the cooldown has passed one probe goes through, and
// when the BMC has recovered the breaker closes.
func TestFailingBMC(t *testing.T) {
	clock := newClock()
	b := startSim(t, sim.Options{Systems: 2})
	if err := b.SetFault("node-0", sim.Fault{Status500: true}); err != nil {
		t.Fatal(err)
	}
	opts := testOptions()
	opts.Now = clock.Now
	d := newDriver(t, opts)
	n := node(b, "node-0")
	reads := func() int { return b.count(http.MethodGet, "/Systems/node-0") }

	for i := range opts.BreakerThreshold {
		_, err := d.GetPowerState(ctx(t), n)
		noSecret(t, err)
		e := asError(t, err)
		for _, want := range []string{"driver redfish", "node uuid-node-0", "BMC " + b.URL, "get power state", "HTTP 500"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("failure %d: %q does not mention %q", i, err, want)
			}
		}
		if e.Status != http.StatusInternalServerError || errors.Is(err, redfish.ErrBreakerOpen) {
			t.Errorf("failure %d: status %d, breaker %v", i, e.Status, errors.Is(err, redfish.ErrBreakerOpen))
		}
	}
	before := reads()
	_, err := d.GetPowerState(ctx(t), n)
	if !errors.Is(err, redfish.ErrBreakerOpen) || !errors.Is(err, plugins.ErrBMCUnreachable) || !plugins.IsRetryable(err) {
		t.Fatalf("after %d failures: %v, want a retryable open breaker", opts.BreakerThreshold, err)
	}
	if reads() != before {
		t.Error("an open breaker let a request through")
	}
	_, err = d.GetPowerState(ctx(t), node(b, "node-1"))
	must(t, "another system of the endpoint", err)

	// Cooldown over, BMC still failing: one probe, then open again.
	clock.Advance(opts.BreakerCooldown + time.Second)
	_, err = d.GetPowerState(ctx(t), n)
	if errors.Is(err, redfish.ErrBreakerOpen) || reads() != before+1 {
		t.Fatalf("probe: %v, %d reads (want exactly one)", err, reads()-before)
	}
	if _, err = d.GetPowerState(ctx(t), n); !errors.Is(err, redfish.ErrBreakerOpen) {
		t.Fatalf("after a failed probe: %v, want the breaker open again", err)
	}

	// The BMC recovers; after the (doubled) cooldown the probe closes it.
	if err := b.SetFault("node-0", sim.Fault{}); err != nil {
		t.Fatal(err)
	}
	clock.Advance(2*opts.BreakerCooldown + time.Second)
	for range 3 {
		_, err := d.GetPowerState(ctx(t), n)
		must(t, "after recovery", err)
	}
}

// TestNoSecretAnywhere drives failures whose text could carry the password
// (a BMC echoing the login body back, bad driver_info, refused credentials)
// and checks every error; newDriver checks the log.
func TestNoSecretAnywhere(t *testing.T) {
	echo := func(b *bmcSim) {
		b.intercept = func(w http.ResponseWriter, r *http.Request) bool {
			if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/Sessions") {
				return false
			}
			body := make([]byte, 512)
			n, _ := r.Body.Read(body)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"error":{"code":"Base.1.8.PropertyValueFormatError","message":"bad body ` +
				strings.ReplaceAll(string(body[:n]), `"`, `'`) + `"}}`))
			return true
		}
	}
	tests := map[string]struct {
		hook   func(*bmcSim)
		extra  []any
		masked bool // the BMC echoed the password, the driver masked it
	}{
		"BMC echoes the login body": {hook: echo, masked: true},
		"bad address":               {extra: []any{redfish.KeyAddress, "ftp://admin:" + password + "@bmc"}},
		"bad auth type":             {extra: []any{redfish.KeyAuthType, password}},
		"password refused":          {hook: func(*bmcSim) {}, extra: []any{redfish.KeyPassword, password + "-wrong"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			hooks := []func(*bmcSim){}
			if tc.hook != nil {
				hooks = append(hooks, tc.hook)
			}
			b := startSim(t, sim.Options{}, hooks...)
			d := newDriver(t, testOptions())
			_, err := d.GetPowerState(ctx(t), node(b, "node-0", tc.extra...))
			if err == nil {
				t.Fatal("no error")
			}
			noSecret(t, err)
			if tc.masked && !strings.Contains(err.Error(), plugins.Masked) {
				t.Errorf("the echo did not reach the error, so masking was not exercised: %v", err)
			}
		})
	}
}
