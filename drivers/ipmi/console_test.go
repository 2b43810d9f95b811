package ipmi

import (
	"bufio"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bougou/go-ipmi/pkg/hal/mock"

	"github.com/rivetmetal/rivet/plugins"
)

// conReader collects what a console client receives.
type conReader struct {
	mu   sync.Mutex
	got  strings.Builder
	done chan struct{}
}

func readAll(c net.Conn) *conReader {
	r := &conReader{done: make(chan struct{})}
	go func() {
		defer close(r.done)
		br := bufio.NewReader(c)
		buf := make([]byte, 512)
		for {
			n, err := br.Read(buf)
			r.mu.Lock()
			r.got.Write(buf[:n])
			r.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	return r
}

func (r *conReader) String() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.got.String()
}

// eventually polls cond (no wall-clock assertion: the bound only ends a
// hung test).
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("never happened: %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestSOLConsoleBridgesBothWays starts the ipmi-socat console against
// go-ipmi's reference BMC with a simulated serial port: bytes the host
// writes on its serial port reach the TCP client, keystrokes of the client
// reach the serial port; a second client is turned away; StopConsole
// disconnects the client and deactivates the payload.
func TestSOLConsoleBridgesBothWays(t *testing.T) {
	serial := &mock.FakeConsoleConn{}
	b := startBMC(t, bmcConfig{console: &mock.Console{Conn: serial}})
	d := newDriver(t, Options{})
	ctx := testCtx(t)
	node := b.node(nil)

	info, err := d.StartConsole(ctx, node, plugins.ConsoleEndpoint{Address: "127.0.0.1", Port: 0})
	if err != nil {
		t.Fatal(err)
	}
	if info.Type != "socat" || !strings.HasPrefix(info.URL, "tcp://127.0.0.1:") {
		t.Fatalf("console info %+v", info)
	}
	if strings.Contains(info.URL, testPassword) || strings.Contains(info.URL, testUser) {
		t.Fatalf("credentials in the console URL: %s", info.URL)
	}
	conn, err := net.Dial("tcp", strings.TrimPrefix(info.URL, "tcp://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	got := readAll(conn)

	// Host -> client (the fake serial port buffers until SOL reads it).
	serial.FeedRX([]byte("login: "))
	eventually(t, "serial output at the TCP client", func() bool { return strings.Contains(got.String(), "login: ") })
	// Client -> host.
	if _, err := conn.Write([]byte("root\r")); err != nil {
		t.Fatal(err)
	}
	eventually(t, "keystrokes on the serial port", func() bool { return strings.Contains(serial.TXString(), "root\r") })

	// Only one client at a time.
	second, err := net.Dial("tcp", strings.TrimPrefix(info.URL, "tcp://"))
	if err != nil {
		t.Fatal(err)
	}
	msg, _ := io.ReadAll(second)
	_ = second.Close()
	if !strings.Contains(string(msg), "already has a client") {
		t.Fatalf("second client got %q", msg)
	}

	if err := d.StopConsole(ctx, node); err != nil {
		t.Fatal(err)
	}
	<-got.done
	if _, err := net.Dial("tcp", strings.TrimPrefix(info.URL, "tcp://")); err == nil {
		t.Fatal("the console still listens after StopConsole")
	}
	// Stopping again is not an error.
	if err := d.StopConsole(ctx, node); err != nil {
		t.Fatal(err)
	}
}

// TestSOLConsoleBadEndpoint: a port already taken is a clear error naming
// the options to fix.
func TestSOLConsoleBadEndpoint(t *testing.T) {
	b := startBMC(t, bmcConfig{})
	d := newDriver(t, Options{})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	_, err = d.StartConsole(testCtx(t), b.node(nil), plugins.ConsoleEndpoint{Address: "127.0.0.1", Port: port})
	if err == nil || !strings.Contains(err.Error(), "port_range") {
		t.Fatalf("err = %v", err)
	}
	var inv *plugins.InvalidDriverInfoError
	_, err = d.StartConsole(testCtx(t), plugins.Node{UUID: "x", DriverInfo: plugins.DriverInfo{}}, plugins.ConsoleEndpoint{Address: "127.0.0.1"})
	if !errors.As(err, &inv) {
		t.Fatalf("missing driver_info: %v", err)
	}
}
