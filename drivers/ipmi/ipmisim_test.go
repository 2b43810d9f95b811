package ipmi

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rivetmetal/rivet/plugins"
	"github.com/rivetmetal/rivet/test/testenv"
)

// simFleet is a set of Debian ipmi_sim BMCs run by shared/tools/ipmi-sim/
// ipmisim.sh on 127.0.0.1:base.. with its state under a test temp dir.
type simFleet struct {
	script, state string
	base, n       int
	multi         bool
}

// startSims starts n ipmi_sim BMCs (one process each, or one process for
// all when multi) and stops them, checking no process is left, when the
// test ends.
func startSims(t *testing.T, n int, multi bool) *simFleet {
	t.Helper()
	testenv.RequireIPMISim(t)
	shared := testenv.RequireShared(t)
	f := &simFleet{script: filepath.Join(shared, "tools", "ipmi-sim", "ipmisim.sh"), state: t.TempDir(),
		base: freePorts(t, n), n: n, multi: multi}
	t.Cleanup(func() { f.stop(t) })
	f.start(t, false)
	return f
}

// freePorts finds n consecutive free UDP ports on loopback.
func freePorts(t *testing.T, n int) int {
	t.Helper()
	for range 50 {
		base := 20000 + rand.IntN(30000)
		ok := true
		for p := base; p < base+n && ok; p++ {
			c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: p})
			if ok = err == nil; ok {
				c.Close()
			}
		}
		if ok {
			return base
		}
	}
	t.Fatalf("no %d consecutive free UDP ports", n)
	return 0
}

func (f *simFleet) run(t *testing.T, keep bool, args ...string) {
	t.Helper()
	cmd := exec.Command(f.script, args...)
	cmd.Env = append(os.Environ(), "IPMISIM_STATE="+f.state, "IPMISIM_USER="+testUser, "IPMISIM_PASS="+testPassword)
	if keep {
		cmd.Env = append(cmd.Env, "IPMISIM_KEEP=1")
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("ipmisim.sh %v: %v\n%s", args, err, out)
	}
}

func (f *simFleet) start(t *testing.T, keep bool) {
	t.Helper()
	mode := "start"
	if f.multi {
		mode = "start-multi"
	}
	f.run(t, keep, mode, strconv.Itoa(f.n), strconv.Itoa(f.base))
}

// pids lists the ipmi_sim processes the script recorded.
func (f *simFleet) pids() []int {
	files, _ := filepath.Glob(filepath.Join(f.state, "*", "pid"))
	var pids []int
	for _, file := range files {
		b, _ := os.ReadFile(file)
		if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids
}

// stop stops the fleet with the script and makes sure every recorded
// process is gone (SIGKILL after 5 s), so no ipmi_sim outlives a test.
func (f *simFleet) stop(t *testing.T) {
	t.Helper()
	pids := f.pids()
	f.run(t, false, "stop")
	deadline := time.Now().Add(5 * time.Second)
	for _, pid := range pids {
		for syscall.Kill(pid, 0) == nil {
			if time.Now().After(deadline) {
				t.Errorf("ipmi_sim pid %d survived stop; killing it", pid)
				_ = syscall.Kill(pid, syscall.SIGKILL)
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// restart stops the processes and starts them again on the same ports with
// the chassis state kept (IPMISIM_KEEP=1): every open session is lost.
func (f *simFleet) restart(t *testing.T) {
	t.Helper()
	f.stop(t)
	f.start(t, true)
}

// node reaches BMC i with settings fit for a loopback simulator.
func (f *simFleet) node(i int, extra plugins.DriverInfo) plugins.Node {
	info := plugins.DriverInfo{KeyAddress: "127.0.0.1", KeyPort: strconv.Itoa(f.base + i), KeyUsername: testUser,
		KeyPassword: testPassword, KeyTimeout: 0.5, KeyRetries: 1, KeyMinCommandInterval: 0.01, KeyPowerStateChangeTimeout: 10}
	for k, v := range extra {
		info[k] = v
	}
	return plugins.Node{UUID: "sim-" + strconv.Itoa(i), HardwareType: HardwareType, DriverInfo: info}
}

// file reads BMC i's chassis state file (power, boot, events.log).
func (f *simFleet) file(t *testing.T, i int, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(f.state, "bmc"+strconv.Itoa(i), "chassis", name))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	return string(bytes.TrimSpace(b))
}
