package ipmi

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rivetmetal/rivet/plugins"
)

// datagramSep separates the BMC's answers in a fuzz input: the i-th
// request gets the i-th answer; requests past the last get none.
var datagramSep = []byte("\x00--RIVET--\x00")

// memBMC answers each request with the next scripted datagram, in memory:
// the driver dials it through go-ipmi's proxy hook, so an input costs no
// socket and no timeout. A request past the end of the script finds the
// BMC gone (ECONNREFUSED, as a stopped BMC's ICMP port unreachable shows
// on a connected UDP socket), which the driver takes for silence at once.
type memBMC struct {
	mu   sync.Mutex
	next [][]byte
}

func (b *memBMC) script(data []byte) {
	b.mu.Lock()
	b.next = bytes.Split(data, datagramSep)
	b.mu.Unlock()
}

// answer pops the answer to one request; ok is false past the script's end.
func (b *memBMC) answer() (answer []byte, ok bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.next) == 0 {
		return nil, false
	}
	answer, b.next = b.next[0], b.next[1:]
	return answer, true
}

// Dial implements the driver's dialer: one connection per RMCP+ session,
// all reading the one script.
func (b *memBMC) Dial(network, addr string) (net.Conn, error) {
	return &memConn{bmc: b}, nil
}

var memAddr = &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 623}

// memConn is one session's datagram connection to a memBMC.
type memConn struct {
	bmc *memBMC

	mu     sync.Mutex
	ready  [][]byte // answers sent but not yet read
	closed bool
}

func (c *memConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return 0, net.ErrClosed
	}
	if answer, ok := c.bmc.answer(); ok {
		c.ready = append(c.ready, answer)
	}
	return len(p), nil
}

func (c *memConn) Read(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.closed:
		return 0, net.ErrClosed
	case len(c.ready) == 0:
		return 0, &net.OpError{Op: "read", Net: "udp", Addr: memAddr, Err: syscall.ECONNREFUSED}
	}
	n := copy(p, c.ready[0]) // a datagram longer than p is truncated, as UDP does
	c.ready = c.ready[1:]
	return n, nil
}

func (c *memConn) Close() error {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	return nil
}

func (c *memConn) LocalAddr() net.Addr              { return &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)} }
func (c *memConn) RemoteAddr() net.Addr             { return memAddr }
func (c *memConn) SetDeadline(time.Time) error      { return nil }
func (c *memConn) SetReadDeadline(time.Time) error  { return nil }
func (c *memConn) SetWriteDeadline(time.Time) error { return nil }

// FuzzIPMIResponses answers the driver's RMCP+ exchanges (session setup,
// then commands) with arbitrary datagrams: go-ipmi's parsing and the
// driver's reading of what it parsed never panic, every call returns, and
// no error carries the password. The datagrams travel in memory (memBMC),
// so a case costs microseconds, not a socket and a timeout. What a spoofed
// or broken BMC can send before authentication (Get Channel Authentication
// Capabilities, Open Session, RAKP 2 and 4) is reached; answers to
// commands inside a session are not, since those carry an HMAC over
// per-session random numbers that no replayed or mutated input matches.
func FuzzIPMIResponses(f *testing.F) {
	const password = "fuzz-ipmi-canary-pw"
	bmc := &memBMC{}
	// Seeds: testdata/fuzz/FuzzIPMIResponses holds a session setup and
	// commands recorded from ipmi_sim (TestRecordIPMISeeds), plus these.
	f.Add([]byte{})
	f.Add([]byte("\x06\x00\xff\x07"))
	f.Add(bytes.Join([][]byte{[]byte("\x06\x00\xff\x07\x00\x00\x00\x00\x00\x00\x00\x00\x00\x10\x81\x1c\x63\x20\x00\x38\x00\x01\x84\x14\x02\x00\x00\x00\x00\x00\x08"), {0x06}}, datagramSep))
	f.Fuzz(func(t *testing.T, data []byte) {
		bmc.script(data)
		// No pacing, and a power wait that ends at its first poll: nothing
		// in a case sleeps, so a case costs its parsing only.
		d := New(slog.New(slog.DiscardHandler), Options{CommandTimeout: 10 * time.Millisecond, Retries: 0,
			PowerStateChangeTimeout: time.Nanosecond})
		d.dial = bmc
		defer func() { _ = d.Close(context.Background()) }()
		n := plugins.Node{UUID: "fuzz", HardwareType: HardwareType, DriverInfo: plugins.DriverInfo{
			KeyAddress: "127.0.0.1", KeyPort: "623", KeyUsername: testUser, KeyPassword: password,
			KeyTimeout: 0.01, KeyRetries: 0}}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		for _, call := range []func() error{
			func() error { _, err := d.GetPowerState(ctx, n); return err },
			func() error { _, err := d.GetBootDevice(ctx, n); return err },
			func() error { return d.SetPowerState(ctx, n, plugins.PowerOn) },
		} {
			if err := call(); err != nil && strings.Contains(err.Error(), password) {
				t.Fatalf("error leaks the password: %v", err)
			}
		}
	})
}

// TestRecordIPMISeeds records ipmi_sim's answers to the calls the fuzz
// target makes into its seed corpus. It runs only with
// RIVET_RECORD_IPMI_SEEDS=1 (and ipmi_sim installed).
func TestRecordIPMISeeds(t *testing.T) {
	if os.Getenv("RIVET_RECORD_IPMI_SEEDS") == "" {
		t.Skip("set RIVET_RECORD_IPMI_SEEDS=1 to re-record the FuzzIPMIResponses seeds from ipmi_sim")
	}
	sims := startSims(t, 1, false)
	proxy, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer proxy.Close()
	upstream, err := net.DialUDP("udp", nil, &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: sims.Port(0)})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var answers [][]byte
	go func() {
		buf, reply := make([]byte, 2048), make([]byte, 2048)
		for {
			n, from, err := proxy.ReadFromUDP(buf)
			if err != nil {
				return
			}
			_, _ = upstream.Write(buf[:n])
			_ = upstream.SetReadDeadline(time.Now().Add(time.Second))
			m, err := upstream.Read(reply)
			if err != nil {
				continue
			}
			mu.Lock()
			answers = append(answers, append([]byte(nil), reply[:m]...))
			mu.Unlock()
			_, _ = proxy.WriteToUDP(reply[:m], from)
		}
	}()
	d := New(slog.New(slog.DiscardHandler), Options{})
	defer func() { _ = d.Close(context.Background()) }()
	n := sims.node(0, plugins.DriverInfo{KeyPort: strconv.Itoa(proxy.LocalAddr().(*net.UDPAddr).Port)})
	if _, err := d.GetPowerState(t.Context(), n); err != nil {
		t.Fatal(err)
	}
	_, _ = d.GetBootDevice(t.Context(), n) // ipmi_sim may have no override set: an answer all the same
	mu.Lock()
	data := bytes.Join(answers, datagramSep)
	mu.Unlock()
	dir := filepath.Join("testdata", "fuzz", "FuzzIPMIResponses")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "ipmi_sim-session-and-commands"), fmt.Appendf(nil, "go test fuzz v1\n[]byte(%q)\n", data), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("recorded %d answers", len(answers))
}
