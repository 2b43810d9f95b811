package plugins

import (
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/rivetmetal/rivet/plugins/internal/proto/driverv1"
)

// probeDriver serves power with a GetPowerState the test controls.
type probeDriver struct {
	powerOnly
	get func(context.Context, Node) (PowerState, error)
}

func (p probeDriver) GetPowerState(ctx context.Context, n Node) (PowerState, error) {
	return p.get(ctx, n)
}

// directHarness is a plugin's gRPC server on a Unix socket, counting the
// calls that reach it over gRPC, and two clients of it: one that opened the
// direct channel and one that did not.
type directHarness struct {
	gp         *GRPCPlugin
	grpcCalls  atomic.Int64
	direct     *Client
	grpcOnly   *Client
	socketPath string
}

// startDirect serves d; register, when set, replaces the GRPCPlugin's
// registration (to stand in for a plugin built before the channel).
func startDirect(t *testing.T, d Driver, register func(*GRPCPlugin, *grpc.Server)) *directHarness {
	t.Helper()
	h := &directHarness{gp: &GRPCPlugin{Driver: d, Protocol: 2}}
	h.socketPath = filepath.Join(t.TempDir(), "g")
	ln, err := net.Listen("unix", h.socketPath)
	if err != nil {
		t.Fatal(err)
	}
	s := grpc.NewServer(grpc.UnaryInterceptor(func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		h.grpcCalls.Add(1)
		return handler(ctx, req)
	}))
	if register != nil {
		register(h.gp, s)
	} else if err := h.gp.GRPCServer(nil, s); err != nil {
		t.Fatal(err)
	}
	go s.Serve(ln)
	t.Cleanup(func() { s.Stop(); h.gp.Close() })
	client := func(open bool) *Client {
		conn, err := grpc.NewClient("unix://"+h.socketPath, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		raw, err := (&GRPCPlugin{Protocol: 2}).GRPCClient(context.Background(), nil, conn)
		if err != nil {
			t.Fatal(err)
		}
		c := raw.(*Client)
		t.Cleanup(c.Close)
		if open {
			ok, err := c.OpenDirect(context.Background())
			if err != nil || (!ok && register == nil) {
				t.Fatalf("OpenDirect: %v, %v", ok, err)
			}
		}
		return c
	}
	h.direct, h.grpcOnly = client(true), client(false)
	return h
}

func powerOffDriver() Driver {
	return probeDriver{powerOnly: powerOnly{descOnly{Description{Name: "probe", HardwareTypes: []string{"probe-hw"}}}},
		get: func(context.Context, Node) (PowerState, error) { return PowerOff, nil }}
}

// TestDirectCarriesReads: the reads the channel carries do not reach the
// gRPC server once it is open; actions still do; the answers are gRPC's.
func TestDirectCarriesReads(t *testing.T) {
	h := startDirect(t, powerOffDriver(), nil)
	ctx := context.Background()
	node := Node{UUID: "n1", DriverInfo: DriverInfo{"probe_password": "secret"}}
	before := h.grpcCalls.Load()
	for range 20 {
		ps, err := h.direct.GetPowerState(ctx, node)
		if err != nil || ps != PowerOff {
			t.Fatalf("direct GetPowerState: %q, %v", ps, err)
		}
	}
	if n := h.grpcCalls.Load() - before; n != 0 {
		t.Fatalf("%d reads reached the gRPC server; the direct channel should carry them", n)
	}
	if !h.direct.Direct() || h.grpcOnly.Direct() {
		t.Fatalf("Direct(): opened %v, not opened %v", h.direct.Direct(), h.grpcOnly.Direct())
	}
	if err := h.direct.SetPowerState(ctx, node, PowerOn); err != nil {
		t.Fatal(err)
	}
	if n := h.grpcCalls.Load() - before; n != 1 {
		t.Fatalf("SetPowerState: %d gRPC calls, want 1 (actions keep gRPC)", n)
	}
	if ps, err := h.grpcOnly.GetPowerState(ctx, node); err != nil || ps != PowerOff {
		t.Fatalf("gRPC GetPowerState: %q, %v", ps, err)
	}
	if n := h.grpcCalls.Load() - before; n != 2 {
		t.Fatalf("a client without the channel made %d gRPC calls, want 1", n-1)
	}
	// Closing the client's channel sends its reads back to gRPC.
	h.direct.Close()
	if _, err := h.direct.GetPowerState(ctx, node); err != nil {
		t.Fatal(err)
	}
	if n := h.grpcCalls.Load() - before; n != 3 {
		t.Fatalf("after Close: %d gRPC calls in all, want 3", n)
	}
}

// TestDirectErrorsMatchGRPC: a driver's error reaches the host the same
// over the channel as over gRPC: message, kind and retry-ability.
func TestDirectErrorsMatchGRPC(t *testing.T) {
	cases := map[string]error{
		"invalid driver info": &InvalidDriverInfoError{Missing: []string{"probe_address"}, Invalid: []string{"probe_port"}},
		"bmc unreachable":     fmt.Errorf("dial 192.0.2.1:623: %w", ErrBMCUnreachable),
		"plain":               errors.New("the BMC said no"),
		"retryable":           MarkRetryable(errors.New("busy")),
		"deadline":            fmt.Errorf("waiting for the BMC: %w", context.DeadlineExceeded),
		"not supported":       fmt.Errorf("probe: %w", ErrNotSupported),
	}
	for name, want := range cases {
		t.Run(name, func(t *testing.T) {
			h := startDirect(t, probeDriver{powerOnly: powerOnly{descOnly{Description{Name: "probe", HardwareTypes: []string{"probe-hw"}}}},
				get: func(context.Context, Node) (PowerState, error) { return "", want }}, nil)
			before := h.grpcCalls.Load()
			_, derr := h.direct.GetPowerState(context.Background(), Node{UUID: "n1"})
			if n := h.grpcCalls.Load() - before; n != 0 {
				t.Fatalf("the failing read went over gRPC (%d calls)", n)
			}
			_, gerr := h.grpcOnly.GetPowerState(context.Background(), Node{UUID: "n1"})
			compareErrors(t, derr, gerr)
		})
	}
	t.Run("method not served", func(t *testing.T) {
		h := startDirect(t, powerOffDriver(), nil)
		_, derr := h.direct.GetBootDevice(context.Background(), Node{UUID: "n1"})
		_, gerr := h.grpcOnly.GetBootDevice(context.Background(), Node{UUID: "n1"})
		compareErrors(t, derr, gerr)
		if !errors.Is(derr, ErrNotSupported) {
			t.Fatalf("GetBootDevice of a power-only driver: %v, want ErrNotSupported", derr)
		}
	})
}

func compareErrors(t *testing.T, direct, viaGRPC error) {
	t.Helper()
	if direct == nil || viaGRPC == nil {
		t.Fatalf("errors: direct %v, gRPC %v; want both", direct, viaGRPC)
	}
	if direct.Error() != viaGRPC.Error() {
		t.Errorf("message: direct %q, gRPC %q", direct, viaGRPC)
	}
	for _, target := range []error{ErrNotSupported, ErrInvalidDriverInfo, ErrBMCUnreachable, ErrPluginCrashed, context.DeadlineExceeded, context.Canceled} {
		if errors.Is(direct, target) != errors.Is(viaGRPC, target) {
			t.Errorf("errors.Is(%v): direct %v, gRPC %v", target, errors.Is(direct, target), errors.Is(viaGRPC, target))
		}
	}
	if IsRetryable(direct) != IsRetryable(viaGRPC) {
		t.Errorf("retryable: direct %v, gRPC %v", IsRetryable(direct), IsRetryable(viaGRPC))
	}
	var di, gi *InvalidDriverInfoError
	if errors.As(direct, &di) != errors.As(viaGRPC, &gi) || (di != nil && fmt.Sprint(di.Missing, di.Invalid) != fmt.Sprint(gi.Missing, gi.Invalid)) {
		t.Errorf("InvalidDriverInfoError: direct %+v, gRPC %+v", di, gi)
	}
}

// TestDirectDeadline: the caller's deadline reaches the driver's context,
// and no deadline stays none.
func TestDirectDeadline(t *testing.T) {
	seen := make(chan time.Duration, 1) // remaining time; -1: no deadline
	d := probeDriver{powerOnly: powerOnly{descOnly{Description{Name: "probe", HardwareTypes: []string{"probe-hw"}}}},
		get: func(ctx context.Context, _ Node) (PowerState, error) {
			dl, ok := ctx.Deadline()
			if !ok {
				seen <- -1
			} else {
				seen <- time.Until(dl)
			}
			return PowerOn, nil
		}}
	h := startDirect(t, d, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := h.direct.GetPowerState(ctx, Node{UUID: "n1"}); err != nil {
		t.Fatal(err)
	}
	if left := <-seen; left <= 0 || left > 30*time.Second {
		t.Fatalf("driver's remaining time %v, want in (0, 30s]", left)
	}
	if _, err := h.direct.GetPowerState(context.Background(), Node{UUID: "n1"}); err != nil {
		t.Fatal(err)
	}
	if left := <-seen; left != -1 {
		t.Fatalf("driver's context has a deadline (%v left) the caller did not set", left)
	}
}

// TestDirectCancel: a caller whose context ends stops waiting with the
// context's error, as over gRPC; the connection is dropped and the next
// call works.
func TestDirectCancel(t *testing.T) {
	entered, release := make(chan struct{}, 1), make(chan struct{})
	block := atomic.Bool{}
	d := probeDriver{powerOnly: powerOnly{descOnly{Description{Name: "probe", HardwareTypes: []string{"probe-hw"}}}},
		get: func(ctx context.Context, _ Node) (PowerState, error) {
			if block.Load() {
				entered <- struct{}{}
				<-release
			}
			return PowerOn, nil
		}}
	h := startDirect(t, d, nil)
	defer close(release)
	for name, mk := range map[string]func() (context.Context, context.CancelFunc){
		"cancel": func() (context.Context, context.CancelFunc) { return context.WithCancel(context.Background()) },
		"deadline": func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), time.Hour)
		},
	} {
		t.Run(name, func(t *testing.T) {
			block.Store(true)
			ctx, cancel := mk()
			done := make(chan error, 1)
			go func() { _, err := h.direct.GetPowerState(ctx, Node{UUID: "n1"}); done <- err }()
			<-entered
			cancel()
			select {
			case err := <-done:
				if !errors.Is(err, context.Canceled) {
					t.Fatalf("cancelled call: %v, want context.Canceled", err)
				}
			case <-time.After(30 * time.Second):
				t.Fatal("a cancelled call is still waiting")
			}
			block.Store(false)
			before := h.grpcCalls.Load()
			if ps, err := h.direct.GetPowerState(context.Background(), Node{UUID: "n1"}); err != nil || ps != PowerOn {
				t.Fatalf("next call: %q, %v", ps, err)
			}
			if n := h.grpcCalls.Load() - before; n != 0 {
				t.Fatalf("next call went over gRPC (%d)", n)
			}
		})
	}
}

// TestDirectFallsBackToGRPC: when the plugin's end of the channel goes away
// (its listener and connections closed), reads go over gRPC and succeed.
func TestDirectFallsBackToGRPC(t *testing.T) {
	h := startDirect(t, powerOffDriver(), nil)
	ctx := context.Background()
	if _, err := h.direct.GetPowerState(ctx, Node{UUID: "n1"}); err != nil {
		t.Fatal(err)
	}
	h.gp.Close()
	before := h.grpcCalls.Load()
	for range 3 {
		if ps, err := h.direct.GetPowerState(ctx, Node{UUID: "n1"}); err != nil || ps != PowerOff {
			t.Fatalf("after the channel closed: %q, %v", ps, err)
		}
	}
	if n := h.grpcCalls.Load() - before; n != 3 {
		t.Fatalf("%d of 3 reads went over gRPC, want all", n)
	}
}

// TestDirectOldPlugin: a plugin built before the channel answers
// OpenDirect with Unimplemented; the host keeps gRPC, without an error.
func TestDirectOldPlugin(t *testing.T) {
	h := startDirect(t, powerOffDriver(), func(p *GRPCPlugin, s *grpc.Server) {
		info, err := Describe(p.Driver, Protocols())
		if err != nil {
			t.Fatal(err)
		}
		desc := driverv1.Driver_ServiceDesc
		desc.Methods = nil
		for _, m := range driverv1.Driver_ServiceDesc.Methods {
			if m.MethodName != "OpenDirect" {
				desc.Methods = append(desc.Methods, m)
			}
		}
		s.RegisterService(&desc, newServer(p.Driver, info, 2, nil))
	})
	if h.direct.Direct() {
		t.Fatal("the channel opened with a plugin that does not serve it")
	}
	before := h.grpcCalls.Load()
	if ps, err := h.direct.GetPowerState(context.Background(), Node{UUID: "n1"}); err != nil || ps != PowerOff {
		t.Fatalf("%q, %v", ps, err)
	}
	if n := h.grpcCalls.Load() - before; n != 1 {
		t.Fatalf("%d gRPC calls, want 1", n)
	}
}

// TestDirectNotOpenedUntilAsked: a host that never asks (one built before
// the channel) leaves the plugin without a listener.
func TestDirectNotOpenedUntilAsked(t *testing.T) {
	gp := &GRPCPlugin{Driver: powerOffDriver(), Protocol: 2}
	s := grpc.NewServer()
	if err := gp.GRPCServer(nil, s); err != nil {
		t.Fatal(err)
	}
	defer gp.Close()
	for _, d := range gp.direct {
		d.mu.Lock()
		ln := d.ln
		d.mu.Unlock()
		if ln != nil {
			t.Fatalf("listening on %s before any OpenDirect", ln.Addr())
		}
	}
}

// openRaw asks the plugin for the channel with cert, as a host would, and
// returns the socket and the plugin's certificate.
func openRaw(t *testing.T, h *directHarness, cert tls.Certificate) *driverv1.OpenDirectResponse {
	t.Helper()
	resp, err := h.grpcOnly.rpc.OpenDirect(context.Background(), &driverv1.OpenDirectRequest{
		ClientCertificate: cert.Certificate[0], Methods: directMethods, Version: directVersion})
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// TestDirectRefusesStrangers: only the certificate sent over the plugin
// connection gets past the handshake; a connection without TLS gets
// nothing.
func TestDirectRefusesStrangers(t *testing.T) {
	h := startDirect(t, powerOffDriver(), nil)
	registered, err := newDirectCert()
	if err != nil {
		t.Fatal(err)
	}
	resp := openRaw(t, h, registered)
	stranger, err := newDirectCert()
	if err != nil {
		t.Fatal(err)
	}
	for name, cert := range map[string]*tls.Certificate{"other certificate": &stranger, "no certificate": nil} {
		t.Run(name, func(t *testing.T) {
			conf := &tls.Config{MinVersion: tls.VersionTLS13, InsecureSkipVerify: true, VerifyPeerCertificate: pinned(resp.GetServerCertificate())}
			if cert != nil {
				conf.Certificates = []tls.Certificate{*cert}
			}
			conn, err := tls.Dial("unix", resp.GetAddress(), conf)
			if err == nil {
				// TLS 1.3 reports the server's refusal of a client
				// certificate at the first read.
				conn.SetDeadline(time.Now().Add(10 * time.Second))
				_, err = conn.Write(frame(0, 0, nil))
				if err == nil {
					_, err = conn.Read(make([]byte, 1))
				}
				conn.Close()
			}
			if err == nil {
				t.Fatal("a stranger's connection was served")
			}
		})
	}
	t.Run("plain connection", func(t *testing.T) {
		conn, err := net.Dial("unix", resp.GetAddress())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		conn.SetDeadline(time.Now().Add(10 * time.Second))
		conn.Write(frame(0, 0, nil))
		if b, err := io.ReadAll(conn); err == nil && len(b) > 0 && b[0] != 0x15 { // 0x15: a TLS alert
			t.Fatalf("a plain connection got %d bytes that are not a TLS alert", len(b))
		}
	})
	t.Run("wrong plugin certificate", func(t *testing.T) {
		d, err := newDirectClient(&driverv1.OpenDirectResponse{Network: "unix", Address: resp.GetAddress(),
			ServerCertificate: stranger.Certificate[0], Methods: resp.GetMethods(), Version: directVersion}, registered)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := d.dial(context.Background()); err == nil {
			t.Fatal("the host accepted a plugin certificate other than the one exchanged")
		}
	})
}

// frame is a request frame with an arbitrary body.
func frame(method uint16, timeout uint64, body []byte) []byte {
	b := make([]byte, directRequestHeader, directRequestHeader+len(body))
	binary.BigEndian.PutUint32(b, uint32(directRequestHeader-4+len(body)))
	binary.BigEndian.PutUint16(b[4:], method)
	binary.BigEndian.PutUint64(b[6:], timeout)
	return append(b, body...)
}

// TestDirectMalformedFrames: an authenticated peer breaking the framing
// loses its connection; the plugin keeps serving other connections.
func TestDirectMalformedFrames(t *testing.T) {
	h := startDirect(t, powerOffDriver(), nil)
	cert, err := newDirectCert()
	if err != nil {
		t.Fatal(err)
	}
	resp := openRaw(t, h, cert)
	d, err := newDirectClient(resp, cert)
	if err != nil {
		t.Fatal(err)
	}
	short := make([]byte, 4)
	binary.BigEndian.PutUint32(short, 3)
	huge := make([]byte, 4)
	binary.BigEndian.PutUint32(huge, directMaxMessage+directRequestHeader)
	negative := frame(0, 1<<63, nil)
	for name, b := range map[string][]byte{
		"shorter than a header": short,
		"over the size limit":   huge,
		"method out of range":   frame(uint16(len(resp.GetMethods())), 0, nil),
		"negative timeout":      negative,
		"undecodable request":   frame(0, 0, []byte{0xff, 0xff, 0xff}),
	} {
		t.Run(name, func(t *testing.T) {
			dc, err := d.dial(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			defer dc.conn.Close()
			dc.conn.SetDeadline(time.Now().Add(10 * time.Second))
			if _, err := dc.conn.Write(b); err != nil {
				t.Fatal(err)
			}
			_, kind, err := readAnswer(dc.conn, nil)
			if name == "undecodable request" {
				// Well framed: the handler's decoder refuses it, as gRPC's does.
				if err != nil || kind != answerStatus {
					t.Fatalf("answer kind %d, %v; want an error status", kind, err)
				}
				return
			}
			if err == nil {
				t.Fatalf("answered (kind %d) a malformed frame", kind)
			}
		})
	}
	if _, err := h.direct.GetPowerState(context.Background(), Node{UUID: "n1"}); err != nil {
		t.Fatal(err)
	}
}

// TestDirectConcurrent: more concurrent callers than the channel takes
// connections all get their answers (the overflow over gRPC); afterwards
// the pool keeps at most directMaxIdle connections and counts them right.
func TestDirectConcurrent(t *testing.T) {
	d := probeDriver{powerOnly: powerOnly{descOnly{Description{Name: "probe", HardwareTypes: []string{"probe-hw"}}}},
		get: func(context.Context, Node) (PowerState, error) {
			time.Sleep(time.Millisecond)
			return PowerOn, nil
		}}
	h := startDirect(t, d, nil)
	const callers, calls = directMaxOpen + 40, 5
	errs := make(chan error, callers)
	for range callers {
		go func() {
			for range calls {
				if ps, err := h.direct.GetPowerState(context.Background(), Node{UUID: "n1"}); err != nil || ps != PowerOn {
					errs <- fmt.Errorf("%q, %v", ps, err)
					return
				}
			}
			errs <- nil
		}()
	}
	for range callers {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	dc := h.direct.router.direct.Load()
	dc.mu.Lock()
	open, idle := dc.open, len(dc.idle)
	dc.mu.Unlock()
	if open != idle || idle > directMaxIdle || idle == 0 {
		t.Fatalf("after the calls: %d open, %d idle; want equal, in 1..%d", open, idle, directMaxIdle)
	}
	if n := h.grpcCalls.Load(); n >= int64(callers*calls) {
		t.Fatalf("all %d calls went over gRPC; the channel took none", n)
	}
}
