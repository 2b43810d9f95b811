package conductor

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rivetmetal/rivet/core/release"
	"github.com/rivetmetal/rivet/db"
	"github.com/rivetmetal/rivet/db/dbtest"
	"github.com/rivetmetal/rivet/drivers/fake"
)

// gatedListener holds Accept while its gate is shut, so the connections
// a client opens meanwhile wait in the kernel's accept queue, as they do
// on a conductor too busy to accept at once.
type gatedListener struct {
	net.Listener
	mu      sync.Mutex
	open    chan struct{} // closed while the gate is open
	blocked chan struct{} // receives when Accept waits at the shut gate
	closed  chan struct{}
	once    sync.Once
}

func newGatedListener(ln net.Listener) *gatedListener {
	g := &gatedListener{Listener: ln, open: make(chan struct{}), blocked: make(chan struct{}, 1), closed: make(chan struct{})}
	close(g.open)
	return g
}

func (g *gatedListener) shut() {
	g.mu.Lock()
	g.open = make(chan struct{})
	g.mu.Unlock()
}

func (g *gatedListener) release() {
	g.mu.Lock()
	close(g.open)
	g.mu.Unlock()
}

func (g *gatedListener) Accept() (net.Conn, error) {
	g.mu.Lock()
	open := g.open
	g.mu.Unlock()
	select {
	case <-open:
	default:
		select {
		case g.blocked <- struct{}{}:
		default:
		}
		select {
		case <-open:
		case <-g.closed:
			return nil, net.ErrClosed
		}
	}
	return g.Listener.Accept()
}

func (g *gatedListener) Close() error {
	g.once.Do(func() { close(g.closed) })
	return g.Listener.Close()
}

// A call whose connection still waits in the accept queue when the
// conductor begins to stop is answered TemporaryFailure (which the API's
// Router retries on another conductor), not reset by the listener closing
// under it: with a peer conductor to take over, Stop keeps the listener
// open until callers' hash rings have expired.
func TestStopAnswersCallsQueuedInTheListener(t *testing.T) {
	dbh := dbtest.Open(t, db.SQLite)
	newHarness(t, dbh, "cond-b", nil) // the peer that takes the calls over

	var gate *gatedListener
	pinner := release.NewPinner(release.Default(), release.Pin{Mode: release.PinLatest})
	cfg := testConfig("cond-a")
	cfg.RingResetInterval = 3 * time.Second
	a, err := New(cfg, Deps{Store: newStore(t, dbh), Drivers: StaticDrivers{fake.HardwareType: fake.New(nil)}, Pinner: pinner,
		Logger: testLogger(t), JSONRPC: &JSONRPCOptions{HostIP: "127.0.0.1", MaxBodyBytes: 1 << 20},
		wrapListener: func(ln net.Listener) net.Listener { gate = newGatedListener(ln); return gate }})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := a.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Stop(ctx) })

	// Shut the gate. The server may already wait inside Accept: one
	// throw-away connection takes that Accept, the next one meets the gate.
	gate.shut()
	for {
		c, err := net.Dial("tcp", a.Addr())
		if err != nil {
			t.Fatal(err)
		}
		c.Close()
		select {
		case <-gate.blocked:
		case <-time.After(100 * time.Millisecond):
			continue
		}
		break
	}

	// A call, fully written, waiting in the accept queue.
	conn, err := net.Dial("tcp", a.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	body := `{"jsonrpc":"2.0","id":"req-queued","method":"get_driver_properties",` +
		`"params":{"driver_name":"fake-hardware","rpc.version":"1.0","context":{"request_id":"req-queued"}}}`
	req, _ := http.NewRequest(http.MethodPost, "http://"+a.Addr()+"/", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if err := req.Write(conn); err != nil {
		t.Fatal(err)
	}

	stopped := make(chan error, 1)
	go func() { stopped <- a.Stop(ctx) }()
	// Open the gate once Stop lingers (or, were it not to, once it is done).
	deadline := time.After(10 * time.Second)
	for !a.lingering.Load() {
		select {
		case err := <-stopped:
			stopped <- err
			t.Log("Stop returned without lingering")
		case <-deadline:
			t.Fatal("Stop neither lingered nor returned within 10s")
		case <-time.After(5 * time.Millisecond):
			continue
		}
		break
	}
	gate.release()

	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), req)
	if err != nil {
		t.Fatalf("the queued call was dropped (%v): the caller cannot tell whether it ran", err)
	}
	reply, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(reply), "TemporaryFailure") || !strings.Contains(string(reply), "shutting down") {
		t.Fatalf("queued call answered %d %s, want a TemporaryFailure refusal", resp.StatusCode, reply)
	}
	if err := <-stopped; err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if c, err := net.Dial("tcp", a.Addr()); err == nil {
		c.Close()
		t.Fatal("listener still open after Stop")
	}
}

// A conductor with no peer for its hardware types has nobody to hand calls
// to, so Stop does not wait for rings to expire.
func TestStopAloneDoesNotLinger(t *testing.T) {
	dbh := dbtest.Open(t, db.SQLite)
	pinner := release.NewPinner(release.Default(), release.Pin{Mode: release.PinLatest})
	cfg := testConfig("cond-alone")
	cfg.RingResetInterval = time.Minute
	a, err := New(cfg, Deps{Store: newStore(t, dbh), Drivers: StaticDrivers{fake.HardwareType: fake.New(nil)}, Pinner: pinner,
		Logger: testLogger(t), JSONRPC: &JSONRPCOptions{HostIP: "127.0.0.1", MaxBodyBytes: 1 << 20}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := a.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := a.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if a.lingering.Load() {
		t.Fatal("a lone conductor lingered")
	}
}
