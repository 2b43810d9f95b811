package transport_test

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/rivetmetal/rivet/plugins/internal/transport"
)

// HTTP/2 frame types and the PING ACK flag (RFC 9113, section 6).
const (
	frameWindowUpdate = 0x8
	framePing         = 0x6
	flagAck           = 0x1
)

// frameCounter parses the HTTP/2 frames one end of a connection writes and
// counts PINGs that are not acknowledgements (a sender's own PINGs) and
// WINDOW_UPDATEs.
type frameCounter struct {
	mu      sync.Mutex
	preface int // bytes of client preface still to skip
	buf     []byte
	pings   int
	updates int
	frames  int
}

func (c *frameCounter) write(p []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.buf = append(c.buf, p...)
	if c.preface > 0 {
		n := min(c.preface, len(c.buf))
		c.buf, c.preface = c.buf[n:], c.preface-n
	}
	for len(c.buf) >= 9 {
		length := int(c.buf[0])<<16 | int(c.buf[1])<<8 | int(c.buf[2])
		if len(c.buf) < 9+length {
			return
		}
		typ, flags := c.buf[3], c.buf[4]
		c.frames++
		switch {
		case typ == framePing && flags&flagAck == 0:
			c.pings++
		case typ == frameWindowUpdate:
			c.updates++
		}
		c.buf = c.buf[9+length:]
	}
}

func (c *frameCounter) counts() (frames, pings, updates int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.frames, c.pings, c.updates
}

// countingConn feeds what is written to it to a frameCounter.
type countingConn struct {
	net.Conn
	c *frameCounter
}

func (cc countingConn) Write(p []byte) (int, error) {
	n, err := cc.Conn.Write(p)
	cc.c.write(p[:n])
	return n, err
}

// countingListener wraps the one connection it accepts.
type countingListener struct {
	net.Listener
	c *frameCounter
}

func (l countingListener) Accept() (net.Conn, error) {
	conn, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return countingConn{conn, l.c}, nil
}

// exchange makes calls sequential unary calls over a Unix socket between a
// server from newServer, given an interceptor that must see every call, and
// a client with dialOpts (no TLS, so the frames can be read) and returns
// what each end wrote.
func exchange(t *testing.T, newServer func([]grpc.ServerOption) *grpc.Server, dialOpts []grpc.DialOption) (client, server *frameCounter) {
	t.Helper()
	dir, err := os.MkdirTemp("", "rivet-transport")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	lis, err := net.Listen("unix", filepath.Join(dir, "s"))
	if err != nil {
		t.Fatal(err)
	}
	client, server = &frameCounter{preface: len("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")}, &frameCounter{}
	var seen atomic.Int32
	count := func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		seen.Add(1)
		return h(ctx, req)
	}
	s := newServer([]grpc.ServerOption{grpc.UnaryInterceptor(count)})
	healthpb.RegisterHealthServer(s, health.NewServer())
	go s.Serve(countingListener{lis, server})
	t.Cleanup(s.Stop)

	dial := func(ctx context.Context, addr string) (net.Conn, error) {
		conn, err := (&net.Dialer{}).DialContext(ctx, "unix", addr)
		if err != nil {
			return nil, err
		}
		return countingConn{conn, client}, nil
	}
	opts := append([]grpc.DialOption{grpc.WithContextDialer(dial), grpc.WithTransportCredentials(insecure.NewCredentials())}, dialOpts...)
	conn, err := grpc.NewClient("passthrough:///"+lis.Addr().String(), opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	hc := healthpb.NewHealthClient(conn)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for range calls {
		if _, err := hc.Check(ctx, &healthpb.HealthCheckRequest{}); err != nil {
			t.Fatal(err)
		}
	}
	if n := seen.Load(); n != calls {
		t.Fatalf("the server's interceptor saw %d calls of %d: the options given to the server were dropped", n, calls)
	}
	// A PING or WINDOW_UPDATE queued while the last response was being
	// read is written just after; give it the time to arrive.
	time.Sleep(100 * time.Millisecond)
	return client, server
}

const calls = 50

// plain is go-plugin's default server, what plugins of earlier releases use.
func plain(opts []grpc.ServerOption) *grpc.Server { return grpc.NewServer(opts...) }

// TestNoPingsPerCall: with the options on both ends (NewServer, as
// plugins.Serve uses it, and DialOptions, as plugins/host does), a call is
// its request and its response, with no PING in either direction;
// WINDOW_UPDATEs only open the connection window, not one per call.
func TestNoPingsPerCall(t *testing.T) {
	client, server := exchange(t, transport.NewServer, transport.DialOptions())
	for _, end := range []struct {
		name string
		c    *frameCounter
	}{{"client", client}, {"server", server}} {
		frames, pings, updates := end.c.counts()
		if pings != 0 {
			t.Errorf("%s sent %d PINGs over %d calls, want 0", end.name, pings, calls)
		}
		if updates > 2 {
			t.Errorf("%s sent %d WINDOW_UPDATEs over %d calls, want at most 2 (at connection start)", end.name, updates, calls)
		}
		if frames == 0 {
			t.Errorf("%s: no frames counted", end.name)
		}
	}
}

// TestDefaultsPingPerCall checks the counter against grpc-go's defaults,
// whose dynamic window pings on (nearly) every call from both ends. If a
// grpc-go release stops doing that, TestNoPingsPerCall no longer tests
// anything and transport's options can be reconsidered.
func TestDefaultsPingPerCall(t *testing.T) {
	client, server := exchange(t, plain, nil)
	for _, end := range []struct {
		name string
		c    *frameCounter
	}{{"client", client}, {"server", server}} {
		// Usually one per call; a PING whose ACK is late skips a call.
		if _, pings, _ := end.c.counts(); pings < calls/5 {
			t.Errorf("%s sent %d PINGs over %d calls with grpc-go's defaults, want at least %d: the frame counter is broken or grpc-go changed",
				end.name, pings, calls, calls/5)
		}
	}
}

// TestMixedEnds: each end's options work against a peer without them (a
// plugin or a host of an earlier release), and the end with them sends no
// PINGs of its own.
func TestMixedEnds(t *testing.T) {
	t.Run("host with options, plugin without", func(t *testing.T) {
		client, _ := exchange(t, plain, transport.DialOptions())
		if _, pings, _ := client.counts(); pings != 0 {
			t.Errorf("client sent %d PINGs, want 0", pings)
		}
	})
	t.Run("plugin with options, host without", func(t *testing.T) {
		_, server := exchange(t, transport.NewServer, nil)
		if _, pings, _ := server.counts(); pings != 0 {
			t.Errorf("server sent %d PINGs, want 0", pings)
		}
	})
}
