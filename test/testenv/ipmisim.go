package testenv

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
)

// IPMISimFleet is a set of Debian ipmi_sim BMCs run by
// shared/tools/ipmi-sim/ipmisim.sh on 127.0.0.1:Base.., with their state
// (power, boot device, event log per BMC) under a test temp dir.
type IPMISimFleet struct {
	Script, State  string
	Base, N        int
	Multi          bool
	User, Password string
}

// StartIPMISim starts n ipmi_sim BMCs (one process each, or one process for
// all when multi) with one admin user, and stops them when the test ends,
// making sure no ipmi_sim process outlives it. It skips locally and fails
// under CI=true when ipmi_sim or shared/ is missing.
func StartIPMISim(t testing.TB, n int, multi bool, user, password string) *IPMISimFleet {
	t.Helper()
	RequireIPMISim(t)
	shared := RequireShared(t)
	f := &IPMISimFleet{Script: filepath.Join(shared, "tools", "ipmi-sim", "ipmisim.sh"), State: t.TempDir(),
		Base: freeUDPPorts(t, n), N: n, Multi: multi, User: user, Password: password}
	t.Cleanup(func() { f.Stop(t) })
	f.start(t, false)
	return f
}

// freeUDPPorts finds n consecutive free UDP ports on loopback.
func freeUDPPorts(t testing.TB, n int) int {
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

func (f *IPMISimFleet) run(t testing.TB, keep bool, args ...string) {
	t.Helper()
	cmd := exec.Command(f.Script, args...)
	cmd.Env = append(os.Environ(), "IPMISIM_STATE="+f.State, "IPMISIM_USER="+f.User, "IPMISIM_PASS="+f.Password)
	if keep {
		cmd.Env = append(cmd.Env, "IPMISIM_KEEP=1")
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("ipmisim.sh %v: %v\n%s", args, err, out)
	}
}

func (f *IPMISimFleet) start(t testing.TB, keep bool) {
	t.Helper()
	mode := "start"
	if f.Multi {
		mode = "start-multi"
	}
	f.run(t, keep, mode, strconv.Itoa(f.N), strconv.Itoa(f.Base))
}

// pids lists the ipmi_sim processes the script recorded.
func (f *IPMISimFleet) pids() []int {
	files, _ := filepath.Glob(filepath.Join(f.State, "*", "pid"))
	var pids []int
	for _, file := range files {
		b, _ := os.ReadFile(file)
		if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids
}

// Stop stops the fleet and makes sure every recorded process is gone
// (SIGKILL after 5 s).
func (f *IPMISimFleet) Stop(t testing.TB) {
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

// Restart stops the processes and starts them again on the same ports with
// the chassis state kept: every open session is lost.
func (f *IPMISimFleet) Restart(t testing.TB) {
	t.Helper()
	f.Stop(t)
	f.start(t, true)
}

// Port is the UDP port of BMC i.
func (f *IPMISimFleet) Port(i int) int { return f.Base + i }

// File reads BMC i's chassis state file: "power" (0|1), "boot", "events.log".
func (f *IPMISimFleet) File(t testing.TB, i int, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(f.State, "bmc"+strconv.Itoa(i), "chassis", name))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	return string(bytes.TrimSpace(b))
}
