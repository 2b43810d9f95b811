package redfish_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stmcginnis/gofish"

	"github.com/rivetmetal/rivet/drivers/redfish"
	"github.com/rivetmetal/rivet/drivers/redfish/sim"
	"github.com/rivetmetal/rivet/plugins"
)

// TestSessionReuse: many concurrent calls for several nodes of one BMC log
// in once, keep one session, and never have more requests in flight than
// the budget. Close logs out.
func TestSessionReuse(t *testing.T) {
	for _, budget := range []int{1, 2, 3} {
		t.Run(fmt.Sprintf("budget %d", budget), func(t *testing.T) {
			b := startSim(t, sim.Options{Systems: 4, Latency: 2 * time.Millisecond})
			opts := testOptions()
			opts.SessionBudgetPerBMC = budget
			d := newDriver(t, opts)
			var wg sync.WaitGroup
			errs := make(chan error, 64)
			for i := range 32 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					n := node(b, fmt.Sprintf("node-%d", i%4))
					if i%2 == 0 {
						_, err := d.GetPowerState(ctx(t), n)
						errs <- err
						return
					}
					_, err := d.GetBootDevice(ctx(t), n)
					errs <- err
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				must(t, "call", err)
			}
			if got := b.logins.Load(); got != 1 {
				t.Errorf("%d logins, want 1", got)
			}
			if got := b.SessionCount(); got != 1 {
				t.Errorf("%d live sessions, want 1", got)
			}
			if got := b.maxFlight.Load(); got > int64(budget) {
				t.Errorf("%d requests in flight at once, budget %d", got, budget)
			}
			must(t, "close", d.Close(ctx(t)))
			if got := b.SessionCount(); got != 0 {
				t.Errorf("%d live sessions after Close, want 0", got)
			}
		})
	}
}

// holdSessions logs in n times with another client, as other tools do, and
// returns a function that logs them out.
func holdSessions(t *testing.T, b *bmcSim, n int) func() {
	t.Helper()
	var clients []*gofish.APIClient
	for range n {
		c, err := gofish.Connect(gofish.ClientConfig{Endpoint: b.URL, Username: sim.DefaultUsername, Password: password})
		if err != nil {
			t.Fatal(err)
		}
		clients = append(clients, c)
	}
	var once sync.Once
	release := func() {
		once.Do(func() {
			for _, c := range clients {
				c.Logout()
			}
		})
	}
	t.Cleanup(release)
	return release
}

// TestSessionLimit: the BMC's only session is taken by someone else. In
// auto mode the driver falls back to basic auth at once; in session mode it
// waits for a session to be freed, and gives up retryably at its deadline
// when none is.
func TestSessionLimit(t *testing.T) {
	tests := map[string]struct {
		auth      string
		releaseIn time.Duration // 0: never
		deadline  time.Duration
		wantErr   error
		logins    func(int64) bool // of the driver (the holder's is not counted)
	}{
		"auto falls back to basic":       {auth: redfish.AuthAuto, deadline: 10 * time.Second, logins: func(n int64) bool { return n == 1 }},
		"session waits for a free one":   {auth: redfish.AuthSession, releaseIn: 150 * time.Millisecond, deadline: 10 * time.Second, logins: func(n int64) bool { return n >= 2 }},
		"session gives up at a deadline": {auth: redfish.AuthSession, deadline: 300 * time.Millisecond, wantErr: redfish.ErrSessionLimit, logins: func(n int64) bool { return n >= 2 }},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			b := startSim(t, sim.Options{SessionLimit: 1})
			release := holdSessions(t, b, 1)
			b.logins.Store(0)
			if tc.releaseIn > 0 {
				time.AfterFunc(tc.releaseIn, release)
			}
			d := newDriver(t, testOptions())
			c, cancel := context.WithTimeout(context.Background(), tc.deadline)
			defer cancel()
			_, err := d.GetPowerState(c, node(b, "node-0", redfish.KeyAuthType, tc.auth))
			noSecret(t, err)
			if tc.wantErr == nil {
				must(t, "get power state", err)
			} else if !errors.Is(err, tc.wantErr) || !plugins.IsRetryable(err) {
				t.Fatalf("got %v (retryable %v), want retryable %v", err, plugins.IsRetryable(err), tc.wantErr)
			}
			if b.SessionCount() > 1 {
				t.Errorf("%d sessions live, limit 1", b.SessionCount())
			}
			if n := b.logins.Load(); !tc.logins(n) {
				t.Errorf("%d login attempts by the driver", n)
			}
		})
	}
}

// TestRelogin: the BMC expires the driver's idle session; the next call
// gets a 401, logs in again once and succeeds.
func TestRelogin(t *testing.T) {
	clock := newClock()
	b := startSim(t, sim.Options{SessionTimeout: time.Minute, Now: clock.Now})
	d := newDriver(t, testOptions())
	n := node(b, "node-0")
	for i, wantLogins := range []int64{1, 1, 2, 2} {
		if i == 2 {
			clock.Advance(2 * time.Minute)
		}
		_, err := d.GetPowerState(ctx(t), n)
		must(t, "get power state", err)
		if got := b.logins.Load(); got != wantLogins {
			t.Errorf("call %d: %d logins, want %d", i, got, wantLogins)
		}
	}
	if got := b.count(http.MethodGet, "/Systems/node-0"); got != 5 {
		t.Errorf("%d system reads, want 5 (4 calls, one refused and repeated)", got)
	}
}

// TestCredentialsRefused: a wrong password is ErrInvalidDriverInfo naming
// the credential keys, not retryable, in every auth mode, and the error
// does not carry the password.
func TestCredentialsRefused(t *testing.T) {
	for _, auth := range []string{redfish.AuthAuto, redfish.AuthSession, redfish.AuthBasic} {
		t.Run(auth, func(t *testing.T) {
			b := startSim(t, sim.Options{Password: "the-real-one"})
			d := newDriver(t, testOptions())
			_, err := d.GetPowerState(ctx(t), node(b, "node-0", redfish.KeyAuthType, auth))
			noSecret(t, err)
			var invalid *plugins.InvalidDriverInfoError
			if !errors.As(err, &invalid) || plugins.IsRetryable(err) {
				t.Fatalf("got %v, want a non-retryable InvalidDriverInfoError", err)
			}
			if fmt.Sprint(invalid.Invalid) != fmt.Sprint([]string{redfish.KeyUsername, redfish.KeyPassword}) {
				t.Errorf("invalid keys %v", invalid.Invalid)
			}
		})
	}
}

// TestPasswordChange: a node whose password changes does not keep using
// the session made with the old one: the old session is logged out, the
// new password is tried (and refused here), and the right one works again
// with a new session. A refused login is not cached.
func TestPasswordChange(t *testing.T) {
	b := startSim(t, sim.Options{})
	d := newDriver(t, testOptions())
	good := node(b, "node-0")
	bad := node(b, "node-0", redfish.KeyPassword, "changed-"+password)
	steps := []struct {
		n          plugins.Node
		ok         bool
		wantLogins int64
		wantLive   int
	}{
		{good, true, 1, 1},
		{bad, false, 2, 0},
		{bad, false, 3, 0},
		{good, true, 4, 1},
		{good, true, 4, 1},
	}
	for i, st := range steps {
		_, err := d.GetPowerState(ctx(t), st.n)
		noSecret(t, err)
		if (err == nil) != st.ok || (!st.ok && !errors.Is(err, plugins.ErrInvalidDriverInfo)) {
			t.Fatalf("step %d: %v, want ok=%v", i, err, st.ok)
		}
		if got, live := b.logins.Load(), b.SessionCount(); got != st.wantLogins || live != st.wantLive {
			t.Errorf("step %d: %d logins, %d live sessions; want %d, %d", i, got, live, st.wantLogins, st.wantLive)
		}
	}
}

// TestIdleLogout: a session no call has used for SessionIdleTimeout is
// logged out; the next call logs in again.
func TestIdleLogout(t *testing.T) {
	b := startSim(t, sim.Options{})
	opts := testOptions()
	opts.SessionIdleTimeout = 50 * time.Millisecond
	d := newDriver(t, opts)
	n := node(b, "node-0")
	for round := int64(1); round <= 2; round++ {
		_, err := d.GetPowerState(ctx(t), n)
		must(t, "get power state", err)
		if got := b.logins.Load(); got != round {
			t.Fatalf("round %d: %d logins", round, got)
		}
		deadline := time.Now().Add(10 * time.Second)
		for b.SessionCount() != 0 && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if got := b.SessionCount(); got != 0 {
			t.Fatalf("round %d: %d sessions still live after the idle timeout", round, got)
		}
	}
}

// TestMoreDemandThanSessions: four driver processes (four conductors)
// hammer a BMC that allows two sessions. In auto mode every call succeeds
// (the late ones on basic auth) and the BMC never holds more than its limit.
func TestMoreDemandThanSessions(t *testing.T) {
	b := startSim(t, sim.Options{Systems: 2, SessionLimit: 2})
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for range 4 {
		d := newDriver(t, testOptions())
		for i := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := d.GetPowerState(ctx(t), node(b, fmt.Sprintf("node-%d", i%2)))
				errs <- err
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		must(t, "call", err)
	}
	if got := b.SessionCount(); got > 2 {
		t.Errorf("%d sessions, limit 2", got)
	}
}
