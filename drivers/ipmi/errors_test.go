package ipmi

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rivetmetal/rivet/plugins"
)

// silentBMC is a UDP socket that reads and never answers.
func silentBMC(t *testing.T) *net.UDPConn {
	t.Helper()
	c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	go func() {
		buf := make([]byte, 1500)
		for {
			if _, _, err := c.ReadFrom(buf); err != nil {
				return
			}
		}
	}()
	return c
}

// TestErrorKinds checks each failure's kind, retry-ability and wording,
// and that the password is in none of them.
func TestErrorKinds(t *testing.T) {
	bmc := startBMC(t, bmcConfig{})
	silent := silentBMC(t).LocalAddr().(*net.UDPAddr)
	tests := map[string]struct {
		node      plugins.Node
		is        error
		retryable bool
		mentions  []string
	}{
		"wrong password": {node: bmc.node(plugins.DriverInfo{KeyPassword: "Wr0ng-" + testPassword}),
			is: plugins.ErrInvalidDriverInfo, mentions: []string{"ipmi 127.0.0.1:", "get power state", KeyPassword, "rejected"}},
		"unknown user": {node: bmc.node(plugins.DriverInfo{KeyUsername: "nobody"}),
			is: plugins.ErrInvalidDriverInfo, mentions: []string{KeyUsername}},
		"missing address": {node: plugins.Node{DriverInfo: plugins.DriverInfo{KeyPassword: testPassword}},
			is: plugins.ErrInvalidDriverInfo, mentions: []string{"ipmi: get power state", "missing " + KeyAddress}},
		"silent BMC": {node: bmc.node(plugins.DriverInfo{KeyPort: float64(silent.Port), KeyTimeout: 0.1, KeyRetries: 1}),
			is: plugins.ErrBMCUnreachable, retryable: true, mentions: []string{"127.0.0.1:", "get power state", "BMC unreachable"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			d := newDriver(t, Options{})
			_, err := d.GetPowerState(testCtx(t), tc.node)
			t.Logf("error: %v", err)
			if !errors.Is(err, tc.is) || plugins.IsRetryable(err) != tc.retryable {
				t.Fatalf("error %v (retryable %v), want %v (retryable %v)", err, plugins.IsRetryable(err), tc.is, tc.retryable)
			}
			for _, m := range tc.mentions {
				if !strings.Contains(err.Error(), m) {
					t.Errorf("error %q does not mention %q", err, m)
				}
			}
			if strings.Contains(err.Error(), testPassword) {
				t.Errorf("error leaks the password: %v", err)
			}
		})
	}
}

// TestSilentBMCDeadline: with timeout T and R retries a silent BMC fails
// no sooner than (R+1)·T (the retries happen) and well before a generous
// bound (they stop); a shorter ctx deadline wins over the retries.
func TestSilentBMCDeadline(t *testing.T) {
	silent := silentBMC(t).LocalAddr().(*net.UDPAddr)
	tests := map[string]struct {
		ctxTimeout time.Duration
		atLeast    time.Duration
		atMost     time.Duration
	}{
		"retries exhausted": {ctxTimeout: 30 * time.Second, atLeast: 300 * time.Millisecond, atMost: 10 * time.Second},
		"ctx deadline":      {ctxTimeout: 150 * time.Millisecond, atLeast: 150 * time.Millisecond, atMost: 5 * time.Second},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			d := newDriver(t, Options{})
			n := plugins.Node{DriverInfo: plugins.DriverInfo{KeyAddress: "127.0.0.1", KeyPort: float64(silent.Port),
				KeyUsername: testUser, KeyPassword: testPassword, KeyTimeout: 0.1, KeyRetries: 2}}
			ctx, cancel := context.WithTimeout(context.Background(), tc.ctxTimeout)
			defer cancel()
			start := time.Now()
			_, err := d.GetPowerState(ctx, n)
			took := time.Since(start)
			if !errors.Is(err, plugins.ErrBMCUnreachable) || !plugins.IsRetryable(err) {
				t.Fatalf("error %v, want retryable ErrBMCUnreachable", err)
			}
			if took < tc.atLeast || took > tc.atMost {
				t.Errorf("failed after %v, want between %v and %v", took, tc.atLeast, tc.atMost)
			}
		})
	}
}

// syncBuffer is a log sink safe for the driver's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestPasswordNeverLeaks runs every path that logs or fails — success,
// wrong password, a lost session and reconnect, a silent BMC, bad
// driver_info — at debug level, and searches errors and log for the
// password.
func TestPasswordNeverLeaks(t *testing.T) {
	var logs syncBuffer
	log := slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	d := New(log, Options{})
	defer d.Close(context.Background())
	bmc := startBMC(t, bmcConfig{})
	silent := silentBMC(t).LocalAddr().(*net.UDPAddr)
	n := bmc.node(nil)
	var errs []error
	call := func(err error) { errs = append(errs, err) }
	call(d.SetPowerState(testCtx(t), n, plugins.PowerOn))
	bmc.restart(t) // the pooled session is now unknown to the BMC
	_, err := d.GetPowerState(testCtx(t), n)
	call(err)
	_, err = d.GetPowerState(testCtx(t), bmc.node(plugins.DriverInfo{KeyPassword: "x" + testPassword}))
	call(err)
	_, err = d.GetPowerState(testCtx(t), bmc.node(plugins.DriverInfo{KeyPort: float64(silent.Port), KeyTimeout: 0.05, KeyRetries: 0}))
	call(err)
	call(d.SetBootDevice(testCtx(t), bmc.node(plugins.DriverInfo{KeyCipherSuite: "2"}), plugins.BootDeviceSetting{Device: plugins.BootPXE}))
	if !strings.Contains(logs.String(), "session lost") {
		t.Errorf("no reconnect was logged; the test did not exercise that path:\n%s", logs.String())
	}
	nonNil := 0
	for _, err := range errs {
		if err != nil {
			nonNil++
			if strings.Contains(err.Error(), testPassword) {
				t.Errorf("error leaks the password: %v", err)
			}
		}
	}
	if nonNil != 3 {
		t.Errorf("%d calls failed, want 3 (wrong password, silent BMC, bad cipher suite): %v", nonNil, errs)
	}
	if strings.Contains(logs.String(), testPassword) {
		t.Errorf("log leaks the password:\n%s", logs.String())
	}
}

// TestScrub: a library error echoing the password is masked.
func TestScrub(t *testing.T) {
	err := classify(context.Background(), params{host: "h", port: 1, password: "hunter22"}, "op",
		errors.New("login as root/hunter22 failed"))
	if strings.Contains(err.Error(), "hunter22") || !strings.Contains(err.Error(), plugins.Masked) {
		t.Errorf("classify did not mask the password: %v", err)
	}
}
