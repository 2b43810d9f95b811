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
	"testing"
	"time"

	"github.com/rivetmetal/rivet/plugins"
)

// datagramSep separates the BMC's answers in a fuzz input: the i-th
// request gets the i-th answer; requests past the last get none.
var datagramSep = []byte("\x00--RIVET--\x00")

// fakeBMC answers each UDP request with the next scripted datagram.
type fakeBMC struct {
	conn *net.UDPConn
	mu   sync.Mutex
	next [][]byte
}

func newFakeBMC(tb testing.TB) *fakeBMC {
	conn, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		tb.Fatal(err)
	}
	b := &fakeBMC{conn: conn}
	tb.Cleanup(func() { conn.Close() })
	go func() {
		buf := make([]byte, 2048)
		for {
			_, from, err := conn.ReadFromUDP(buf)
			if err != nil {
				return
			}
			b.mu.Lock()
			var answer []byte
			if len(b.next) > 0 {
				answer, b.next = b.next[0], b.next[1:]
			}
			b.mu.Unlock()
			if answer != nil {
				_, _ = conn.WriteToUDP(answer, from)
			}
		}
	}()
	return b
}

func (b *fakeBMC) script(data []byte) {
	b.mu.Lock()
	b.next = bytes.Split(data, datagramSep)
	b.mu.Unlock()
}

func (b *fakeBMC) port() int { return b.conn.LocalAddr().(*net.UDPAddr).Port }

// FuzzIPMIResponses answers the driver's RMCP+ exchanges (session setup,
// then commands) with arbitrary datagrams: go-ipmi's parsing and the
// driver's reading of what it parsed never panic, every call returns, and
// no error carries the password.
func FuzzIPMIResponses(f *testing.F) {
	const password = "fuzz-ipmi-canary-pw"
	bmc := newFakeBMC(f)
	// Seeds: testdata/fuzz/FuzzIPMIResponses holds a session setup and
	// commands recorded from ipmi_sim (TestRecordIPMISeeds), plus these.
	f.Add([]byte{})
	f.Add([]byte("\x06\x00\xff\x07"))
	f.Add(bytes.Join([][]byte{[]byte("\x06\x00\xff\x07\x00\x00\x00\x00\x00\x00\x00\x00\x00\x10\x81\x1c\x63\x20\x00\x38\x00\x01\x84\x14\x02\x00\x00\x00\x00\x00\x08"), {0x06}}, datagramSep))
	f.Fuzz(func(t *testing.T, data []byte) {
		bmc.script(data) // loopback answers take microseconds: the 10 ms minimum timeout keeps cases fast
		d := New(slog.New(slog.DiscardHandler), Options{CommandTimeout: 10 * time.Millisecond, Retries: 0,
			MinCommandInterval: time.Microsecond, PowerStateChangeTimeout: 50 * time.Millisecond})
		defer func() { _ = d.Close(context.Background()) }()
		n := plugins.Node{UUID: "fuzz", HardwareType: HardwareType, DriverInfo: plugins.DriverInfo{
			KeyAddress: "127.0.0.1", KeyPort: strconv.Itoa(bmc.port()), KeyUsername: testUser, KeyPassword: password,
			KeyTimeout: 0.01, KeyRetries: 0, KeyMinCommandInterval: 0.001}}
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
