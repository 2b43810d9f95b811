package host_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rivetmetal/rivet/plugins/host"
)

// helperEnv makes the test binary act as a conductor: it starts the plugin
// at the given path, prints the plugin's pid and waits to be killed.
const helperEnv = "RIVET_HOST_TEST_HELPER_PLUGIN"

func runHostHelper(pluginPath string) {
	m, err := host.New(host.Config{BuiltIn: map[string]host.Command{"test": {Path: pluginPath}}, WatchInterval: -1})
	if err == nil {
		err = m.Start(context.Background())
	}
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	regs := m.Registrations()
	if len(regs) != 1 {
		fmt.Println("error", m.Refused())
		os.Exit(1)
	}
	fmt.Println("pid", regs[0].PID)
	time.Sleep(time.Minute)
	os.Exit(0)
}

// TestPluginExitsWhenHostKilled SIGKILLs a conductor process (no cleanup
// runs) and checks that its plugin exits on its own instead of lingering
// under init.
func TestPluginExitsWhenHostKilled(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+testPluginBin)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("helper: %v", err)
	}
	f := strings.Fields(line)
	if len(f) != 2 || f[0] != "pid" {
		t.Fatalf("helper said %q", line)
	}
	pluginPID, _ := strconv.Atoi(f[1])
	if processGone(pluginPID) {
		t.Fatalf("plugin %d not running before the host is killed", pluginPID)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	waitFor(t, "orphaned plugin to exit", func() bool { return processGone(pluginPID) })
}
