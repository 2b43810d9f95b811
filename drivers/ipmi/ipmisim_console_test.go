package ipmi

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rivetmetal/rivet/plugins"
	"github.com/rivetmetal/rivet/test/testenv"
)

// TestSOLConsoleAgainstIPMISim runs the ipmi-socat console against
// OpenIPMI's ipmi_sim, a BMC nobody here wrote, whose SOL serial device is
// a TCP connection to the test ("sol tcp:127.0.0.1:port", which ipmi_sim
// dials when the payload is activated): what the host writes on its serial
// port reaches the console's TCP client and the client's keystrokes reach
// the serial port. The client types first: output the test's serial port
// sent at once after ipmi_sim connected never reached the client (output
// sent after the first keystrokes does), while a real host keeps printing. Skipped locally without
// ipmi_sim; required under CI=true.
func TestSOLConsoleAgainstIPMISim(t *testing.T) {
	bin := testenv.RequireIPMISim(t)
	shared := testenv.RequireShared(t)

	serialLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer serialLn.Close()
	udp, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	bmcPort := udp.LocalAddr().(*net.UDPAddr).Port
	udp.Close()

	dir := t.TempDir()
	conf := fmt.Sprintf(`name "solbmc"
set_working_mc 0x20
  startlan 1
    addr 127.0.0.1 %d
    priv_limit admin
    allowed_auths_callback md5
    allowed_auths_user md5
    allowed_auths_operator md5
    allowed_auths_admin md5
    guid b0c0000000000000000000000000c029
  endlan
  sol "tcp:%s" 115200
  user 2 true "admin" "password" admin 10 md5
`, bmcPort, serialLn.Addr().String())
	if err := os.WriteFile(filepath.Join(dir, "lan.conf"), []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-c", filepath.Join(dir, "lan.conf"), "-f", filepath.Join(shared, "tools", "ipmi-sim", "bmc.emu"), "-s", dir, "-n")
	var simLog strings.Builder
	cmd.Stdout, cmd.Stderr = &simLog, &simLog
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })

	d := newDriver(t, Options{})
	node := plugins.Node{UUID: "5c0e2d1a-9b8f-4c7d-a6e5-f4d3c2b1a098", HardwareType: HardwareType, DriverInfo: plugins.DriverInfo{
		KeyAddress: "127.0.0.1", KeyPort: float64(bmcPort), KeyUsername: "admin", KeyPassword: "password",
		KeyTimeout: 1.0, KeyRetries: 2,
	}}
	eventually(t, "ipmi_sim answering", func() bool {
		_, err := d.GetPowerState(testCtx(t), node)
		return err == nil
	})

	info, err := d.StartConsole(testCtx(t), node, plugins.ConsoleEndpoint{Address: "127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	defer d.StopConsole(testCtx(t), node)
	client, err := net.Dial("tcp", strings.TrimPrefix(info.URL, "tcp://"))
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	got := readAll(client)

	// ipmi_sim dials the serial device once the payload is active.
	type accepted struct {
		c   net.Conn
		err error
	}
	ch := make(chan accepted, 1)
	go func() { c, err := serialLn.Accept(); ch <- accepted{c, err} }()
	var serial net.Conn
	select {
	case a := <-ch:
		if a.err != nil {
			t.Fatal(a.err)
		}
		serial = a.c
	case <-time.After(60 * time.Second):
		t.Fatalf("ipmi_sim never opened its SOL serial device; its log:\n%s", simLog.String())
	}
	defer serial.Close()
	var mu sync.Mutex
	var typed strings.Builder
	go func() {
		buf := make([]byte, 256)
		for {
			n, err := serial.Read(buf)
			mu.Lock()
			typed.Write(buf[:n])
			mu.Unlock()
			if err != nil {
				return
			}
		}
	}()

	if _, err := client.Write([]byte("root\r")); err != nil {
		t.Fatal(err)
	}
	eventually(t, "keystrokes on the serial port", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return strings.Contains(typed.String(), "root\r")
	})
	if _, err := serial.Write([]byte("login: ")); err != nil {
		t.Fatal(err)
	}
	eventually(t, "serial output at the TCP client", func() bool {
		if strings.Contains(got.String(), "rivet: ") {
			t.Fatalf("the console ended: %q", got.String())
		}
		return strings.Contains(got.String(), "login: ")
	})
	if err := d.StopConsole(testCtx(t), node); err != nil {
		t.Fatal(err)
	}
	<-got.done
}
