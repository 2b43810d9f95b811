package fake

import (
	"bufio"
	"context"
	"io"
	"net"
	"strings"
	"testing"

	"github.com/rivetmetal/rivet/plugins"
)

// TestFakeConsoleLoopsBack: the fake console greets its client and echoes
// what it types; StopConsole closes the client and the listener.
func TestFakeConsoleLoopsBack(t *testing.T) {
	d := New(nil)
	t.Cleanup(func() { _ = d.Close(context.Background()) })
	node := plugins.Node{UUID: "6a1f0e1c-2b3d-4e5f-8a9b-0c1d2e3f4a5b"}
	info, err := d.StartConsole(context.Background(), node, plugins.ConsoleEndpoint{Address: "127.0.0.1"})
	if err != nil || info.Type != "socat" || !strings.HasPrefix(info.URL, "tcp://127.0.0.1:") {
		t.Fatalf("%+v %v", info, err)
	}
	conn, err := net.Dial("tcp", strings.TrimPrefix(info.URL, "tcp://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	r := bufio.NewReader(conn)
	line, err := r.ReadString('\n')
	if err != nil || !strings.Contains(line, node.UUID) {
		t.Fatalf("greeting %q %v", line, err)
	}
	if _, err := conn.Write([]byte("hello\n")); err != nil {
		t.Fatal(err)
	}
	if echo, err := r.ReadString('\n'); err != nil || echo != "hello\n" {
		t.Fatalf("echo %q %v", echo, err)
	}
	if err := d.StopConsole(context.Background(), node); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadAll(r); err != nil && !strings.Contains(err.Error(), "reset") {
		t.Fatalf("after stop: %v", err)
	}
	if c, err := net.Dial("tcp", strings.TrimPrefix(info.URL, "tcp://")); err == nil {
		c.Close()
		t.Fatal("still listening")
	}
}
