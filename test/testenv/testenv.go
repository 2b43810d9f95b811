package testenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// IsCI reports whether the tests run under CI (CI=true), where a missing
// service is a failure rather than a skip.
func IsCI() bool { return os.Getenv("CI") == "true" }

// Unavailable skips t with reason locally and fails it under CI.
func Unavailable(t testing.TB, reason string) {
	t.Helper()
	if IsCI() {
		t.Fatalf("required under CI=true but unavailable: %s", reason)
	}
	t.Skipf("skipping: %s (set up the service, or run .ci/run)", reason)
}

// RepoRoot returns the root of the rivet checkout.
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// RequireShared returns the shared/ folder that sits beside the checkout
// (specs, Redfish mockups, ipmi_sim scripts).
func RequireShared(t testing.TB) string {
	t.Helper()
	dir := os.Getenv("RIVET_SHARED_DIR")
	if dir == "" {
		dir = filepath.Join(RepoRoot(), "..", "shared")
	}
	if _, err := os.Stat(filepath.Join(dir, "tools", "ipmi-sim")); err != nil {
		Unavailable(t, "shared/ folder not found at "+dir+" (set RIVET_SHARED_DIR)")
	}
	return dir
}

// RequireIPMISim returns the path of Debian's ipmi_sim (package openipmi).
func RequireIPMISim(t testing.TB) string {
	t.Helper()
	p, err := exec.LookPath("ipmi_sim")
	if err != nil {
		Unavailable(t, "ipmi_sim not on PATH (apt-get install openipmi)")
	}
	return p
}

// RequireIPMITool returns the path of ipmitool.
func RequireIPMITool(t testing.TB) string {
	t.Helper()
	p, err := exec.LookPath("ipmitool")
	if err != nil {
		Unavailable(t, "ipmitool not on PATH (apt-get install ipmitool)")
	}
	return p
}

// RedfishMockups are the DMTF mockups shared/redfish-mockups holds.
var RedfishMockups = []string{"public-rackmount1", "public-tower", "public-bladed", "public-localstorage", "public-liquid-cooled-server"}

// RequireRedfishMockups returns shared/redfish-mockups, the DMTF Redfish
// mockups (BSD-3) the drivers are tested against as peers nobody here
// wrote; every mockup of RedfishMockups must be there. They are read from
// beside the checkout, never copied into it.
func RequireRedfishMockups(t testing.TB) string {
	t.Helper()
	dir := os.Getenv("RIVET_SHARED_DIR")
	if dir == "" {
		dir = filepath.Join(RepoRoot(), "..", "shared")
	}
	dir = filepath.Join(dir, "redfish-mockups")
	for _, m := range RedfishMockups {
		if _, err := os.Stat(filepath.Join(dir, m, "index.json")); err != nil {
			Unavailable(t, "DMTF Redfish mockup "+m+" not found under "+dir+" (set RIVET_SHARED_DIR)")
		}
	}
	return dir
}

// IPAVersion is the ironic-python-agent release the real-agent tests run.
const IPAVersion = "9.14.1"

// RequireIPA prepares the unmodified ironic-python-agent for a test and
// returns its source tree: the tarball shared/peers/ipa/ipa-9.14.1-min.tar.gz
// (or $RIVET_IPA_TARBALL) unpacked into a temporary directory. The agent
// runs as root in its own network and PID namespaces on a loop device, so
// the test needs root, ip, losetup, unshare, the tools the agent shells out
// to, and Debian's Python packages it imports (test/ipa/install-debs.sh).
func RequireIPA(t testing.TB) string {
	t.Helper()
	if os.Geteuid() != 0 {
		Unavailable(t, "the real-agent test needs root (network and PID namespaces, loop devices)")
	}
	for _, tool := range []string{"ip", "losetup", "unshare", "qemu-img", "sgdisk", "parted", "mkfs.ext4", "partprobe", "wipefs", "lsblk", "tar"} {
		if _, err := exec.LookPath(tool); err != nil {
			Unavailable(t, tool+" not on PATH (bash test/ipa/install-debs.sh)")
		}
	}
	if out, err := exec.Command("/usr/bin/python3", "-c", "import ironic_lib, pint, pyudev, oslo_service.wsgi, eventlet, stevedore, tenacity").CombinedOutput(); err != nil {
		Unavailable(t, "Debian's Python packages for the agent are missing (bash test/ipa/install-debs.sh): "+string(out))
	}
	tarball := os.Getenv("RIVET_IPA_TARBALL")
	if tarball == "" {
		dir := os.Getenv("RIVET_SHARED_DIR")
		if dir == "" {
			dir = filepath.Join(RepoRoot(), "..", "shared")
		}
		tarball = filepath.Join(dir, "peers", "ipa", "ipa-"+IPAVersion+"-min.tar.gz")
	}
	if _, err := os.Stat(tarball); err != nil {
		Unavailable(t, "the agent's source tarball is not at "+tarball+" (set RIVET_IPA_TARBALL or RIVET_SHARED_DIR)")
	}
	dest := t.TempDir()
	if out, err := exec.Command("tar", "-xzf", tarball, "-C", dest).CombinedOutput(); err != nil {
		t.Fatalf("unpacking %s: %v: %s", tarball, err, out)
	}
	src := filepath.Join(dest, "ironic-python-agent-"+IPAVersion)
	if _, err := os.Stat(filepath.Join(src, "ironic_python_agent")); err != nil {
		t.Fatalf("%s holds no ironic_python_agent tree", tarball)
	}
	return src
}
