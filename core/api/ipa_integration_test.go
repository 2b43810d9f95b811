package api_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rivetmetal/rivet/core/api"
	"github.com/rivetmetal/rivet/core/conductor"
	"github.com/rivetmetal/rivet/core/release"
	"github.com/rivetmetal/rivet/drivers/fake"
	"github.com/rivetmetal/rivet/test/testenv"
)

// The unmodified ironic-python-agent (IPA) against Rivet: the API and a
// conductor (fake-hardware: "booting the agent" is the test starting IPA)
// listen on the host side of a veth pair; IPA runs in its own network and
// PID namespaces (a veth named ipa.<k>, as its lookup needs) on a loop
// device, the only disk test/ipa's hardware manager shows it. The test
// deploys raw and qcow2 whole-disk images it serves over HTTP and reads the
// loop device back; undeploys with automated cleaning (erase_devices_metadata)
// and checks the disk's first and last MiB are zero; deploys with a wrong
// checksum (IPA's error in last_error); kills the agent mid-deploy (the
// deploy fails: the callback times out, or the step's command finds no
// agent; no lease left); and sends heartbeats without or with a
// wrong token (refused).

const (
	imageSize = 64 << 20 // bytes of the test disk image
	diskSize  = 1 << 30  // bytes of the loop device
	mib       = 1 << 20
)

type ipaRig struct {
	t       *testing.T
	src     string // IPA source tree
	dir     string // scratch
	ns      string // network namespace
	hostIP  string
	agentIP string
	mac     string
	veth    string // host side
	loop    string // /dev/loopN
	apiURL  string
	imgURL  string
	agent   *exec.Cmd
	agentN  int
	maxAPI  string // the API's maximum and the version the rig's calls ask for
	// collectors is the agent's inspection_collectors: empty, it posts no
	// inspection data (in-band inspection sets it).
	collectors string
	// bootif, when set, is the BOOTIF= the agent reads from its kernel
	// command line (a file bind-mounted over /proc/cmdline in its mount
	// namespace): the NIC it "booted" from.
	bootif string
}

func run(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v: %s", name, strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// newIPARig sets up the namespace, the veth pair, the loop device, the
// image server and the Rivet stack.
func newIPARig(t *testing.T) *ipaRig {
	return newIPARigAt(t, "1.72")
}

// newIPARigAt is newIPARig with the API's maximum raised to maxAPI.
func newIPARigAt(t *testing.T, maxAPI string) *ipaRig {
	src := testenv.RequireIPA(t)
	k := 1 + rand.IntN(250)
	r := &ipaRig{t: t, src: src, dir: t.TempDir(), ns: fmt.Sprintf("rivet-ipa-%d", k),
		hostIP: fmt.Sprintf("10.254.%d.1", k), agentIP: fmt.Sprintf("10.254.%d.2", k),
		mac: fmt.Sprintf("02:00:00:72:69:%02x", k), veth: fmt.Sprintf("ripa%dh", k), maxAPI: maxAPI}
	_ = exec.Command("ip", "netns", "del", r.ns).Run() // a leftover of an interrupted run
	run(t, "ip", "netns", "add", r.ns)
	t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", r.ns).Run() })
	agentIf := fmt.Sprintf("ipa.%d", k)
	run(t, "ip", "link", "add", r.veth, "type", "veth", "peer", "name", agentIf)
	t.Cleanup(func() { _ = exec.Command("ip", "link", "del", r.veth).Run() })
	run(t, "ip", "link", "set", agentIf, "netns", r.ns)
	run(t, "ip", "addr", "add", r.hostIP+"/30", "dev", r.veth)
	run(t, "ip", "link", "set", r.veth, "up")
	for _, c := range [][]string{
		{"link", "set", agentIf, "address", r.mac}, {"addr", "add", r.agentIP + "/30", "dev", agentIf},
		{"link", "set", agentIf, "up"}, {"link", "set", "lo", "up"},
	} {
		run(t, "ip", append([]string{"netns", "exec", r.ns, "ip"}, c...)...)
	}

	backing := filepath.Join(r.dir, "disk")
	if err := os.WriteFile(backing, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(backing, diskSize); err != nil {
		t.Fatal(err)
	}
	r.loop = run(t, "losetup", "-f", "--show", "-P", backing)
	t.Cleanup(func() { _ = exec.Command("losetup", "-d", r.loop).Run() })

	r.buildImages()
	imgL, err := net.Listen("tcp", r.hostIP+":0")
	if err != nil {
		t.Fatal(err)
	}
	imgSrv := &http.Server{Handler: http.FileServer(http.Dir(filepath.Join(r.dir, "images"))), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = imgSrv.Serve(imgL) }()
	t.Cleanup(func() { _ = imgSrv.Close() })
	r.imgURL = "http://" + imgL.Addr().String()

	h := newStackTuned(t, release.NewPinner(release.Default(), release.Pin{}),
		conductor.StaticDrivers{fake.HardwareType: fake.New(nil)},
		func(c *conductor.Config) {
			c.AutomatedClean, c.EraseDevicesMetadataPriority = true, 99
			c.DeployCallbackTimeout, c.CheckInterval = 25*time.Second, time.Second
			c.Agent.PollInterval = 200 * time.Millisecond
		},
		func(d *api.Deps) { api.SetMaxAPIForTest(d, maxAPI) })
	apiL, err := net.Listen("tcp", r.hostIP+":0")
	if err != nil {
		t.Fatal(err)
	}
	apiSrv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = apiSrv.Serve(apiL) }()
	t.Cleanup(func() { _ = apiSrv.Close() })
	r.apiURL = "http://" + apiL.Addr().String()
	t.Cleanup(r.stopAgent)
	return r
}

// buildImages makes images/disk.raw (a GPT disk with one ext4 partition
// holding a marker and random data), images/disk.qcow2 and their sha256.
func (r *ipaRig) buildImages() {
	t := r.t
	img := filepath.Join(r.dir, "images")
	root := filepath.Join(r.dir, "fsroot")
	for _, d := range []string{img, root} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	random := make([]byte, 4*mib)
	for i := range random {
		random[i] = byte(rand.IntN(256))
	}
	if err := os.WriteFile(filepath.Join(root, "MARKER"), []byte("rivet ipa test\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "random"), random, 0o644); err != nil {
		t.Fatal(err)
	}
	part := filepath.Join(r.dir, "part.img")
	run(t, "mkfs.ext4", "-q", "-F", "-d", root, part, fmt.Sprint((imageSize-2*mib)/1024)+"k")
	raw := filepath.Join(img, "disk.raw")
	if err := os.WriteFile(raw, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(raw, imageSize); err != nil {
		t.Fatal(err)
	}
	run(t, "sgdisk", "-n", fmt.Sprintf("1:2048:%d", (imageSize-mib)/512-1), raw)
	run(t, "dd", "if="+part, "of="+raw, "bs=1M", "seek=1", "conv=notrunc", "status=none")
	run(t, "qemu-img", "convert", "-f", "raw", "-O", "qcow2", raw, filepath.Join(img, "disk.qcow2"))
}

// partitionBytes is the image's partition: bytes [1 MiB, 63 MiB).
func partitionBytes(t *testing.T, path string) []byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, imageSize-2*mib)
	if _, err := f.ReadAt(buf, mib); err != nil {
		t.Fatal(err)
	}
	return buf
}

func sha256File(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// startAgent starts IPA as the node's freshly booted agent.
func (r *ipaRig) startAgent() {
	t := r.t
	r.stopAgent()
	r.agentN++
	conf := filepath.Join(r.dir, "ipa.conf")
	text := fmt.Sprintf(`[DEFAULT]
api_url = %s
listen_host = %s
listen_port = 9999
advertise_host = %s
advertise_port = 9999
enable_auto_tls = False
enable_vlan_interfaces =
collect_lldp = False
inspection_collectors = %s
lookup_timeout = 120
lookup_interval = 1
disk_wait_attempts = 1
image_download_connection_retries = 1
image_download_connection_retry_interval = 1
debug = True
`, r.apiURL, r.agentIP, r.agentIP, r.collectors)
	if err := os.WriteFile(conf, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	ipaDir := filepath.Join(testenv.RepoRoot(), "test", "ipa")
	args := []string{"netns", "exec", r.ns, "unshare", "--pid", "--fork", "--kill-child", "--mount-proc"}
	if r.bootif != "" {
		// The agent reads BOOTIF from /proc/cmdline: the mount namespace
		// unshare made gets its own, then IPA replaces the shell as PID 1.
		cmdline := filepath.Join(r.dir, "cmdline")
		if err := os.WriteFile(cmdline, []byte("BOOTIF="+r.bootif+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		args = append(args, "sh", "-c", `mount --bind "$0" /proc/cmdline && exec "$@"`, cmdline)
	}
	args = append(args, "env",
		"PATH="+filepath.Join(ipaDir, "shim")+":/usr/sbin:/usr/bin:/sbin:/bin",
		"PYTHONPATH="+r.src+":"+filepath.Join(ipaDir, "hwm"),
		"RIVET_IPA_DISKS="+r.loop, "RIVET_IPA_SHIM_LOG="+filepath.Join(r.dir, "shim.log"),
		"/usr/bin/python3", "-c", `import sys; sys.argv[0] = "ironic-python-agent"; from ironic_python_agent.cmd.agent import run; run()`,
		"--config-file", conf)
	cmd := exec.Command("ip", args...)
	logf, err := os.Create(filepath.Join(r.dir, fmt.Sprintf("ipa-%d.log", r.agentN)))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r.agent = cmd
}

// stopAgent kills the agent: SIGKILL to unshare, whose --kill-child takes
// IPA (PID 1 of its namespace, which ignores SIGTERM) with it.
func (r *ipaRig) stopAgent() {
	if r.agent == nil {
		return
	}
	_ = r.agent.Process.Kill()
	_ = r.agent.Wait()
	r.agent = nil
}

// agentLog is the last agent's log tail, for failures.
func (r *ipaRig) agentLog() string {
	data, _ := os.ReadFile(filepath.Join(r.dir, fmt.Sprintf("ipa-%d.log", r.agentN)))
	if len(data) > 6000 {
		data = data[len(data)-6000:]
	}
	return string(data)
}

func (r *ipaRig) call(method, path string, body any, want int) map[string]any {
	r.t.Helper()
	var rd io.Reader
	if body != nil {
		data, _ := json.Marshal(body)
		rd = bytes.NewReader(data)
	}
	req, _ := http.NewRequest(method, r.apiURL+path, rd)
	req.Header.Set(api.HeaderVersion, r.maxAPI)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		r.t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	if resp.StatusCode != want {
		r.t.Fatalf("%s %s: %d, want %d: %v", method, path, resp.StatusCode, want, out)
	}
	return out
}

// waitState polls the node until it is in state (and settled), failing on
// a failure state other than the one awaited.
func (r *ipaRig) waitState(id, state string, within time.Duration) map[string]any {
	r.t.Helper()
	deadline := time.Now().Add(within)
	for {
		n := r.call("GET", "/v1/nodes/"+id, nil, 200)
		st, _ := n["provision_state"].(string)
		if st == state && (n["target_provision_state"] == nil || strings.HasSuffix(state, "wait") || state == "wait call-back") {
			return n
		}
		if st != state && strings.HasSuffix(st, "failed") {
			r.t.Fatalf("node %s is %s, want %s: %v\nagent log:\n%s", id, st, state, n["last_error"], r.agentLog())
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("node %s still %s after %v, want %s (last_error %v)\nagent log:\n%s", id, st, within, state, n["last_error"], r.agentLog())
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// verifyDisk checks the loop device holds the image's partition bytes.
func (r *ipaRig) verifyDisk(image string) {
	r.t.Helper()
	want := partitionBytes(r.t, filepath.Join(r.dir, "images", "disk.raw"))
	got := partitionBytes(r.t, r.loop)
	if !bytes.Equal(want, got) {
		r.t.Fatalf("%s: the disk's partition bytes differ from the image's", image)
	}
}

// verifyConfigDrive finds the config drive partition the agent created
// (util-linux's blkid: an iso9660 file system labelled config-2 on the
// loop device) and reads openstack/latest/meta_data.json from it (with an
// ISO9660 reader: this kernel has no iso9660 module to mount it).
func (r *ipaRig) verifyConfigDrive(id string) {
	t := r.t
	t.Helper()
	run(t, "partprobe", r.loop)
	// Only this rig's loop device's partitions: blkid -t LABEL=config-2
	// alone finds the first in the system, another test's when several
	// rigs run on one machine.
	dev := ""
	for _, part := range strings.Fields(run(t, "lsblk", "-lnp", "-o", "NAME", r.loop)) {
		label, _ := exec.Command("blkid", "-o", "value", "-s", "LABEL", part).Output() // exit 2: no label
		if part != r.loop && strings.TrimSpace(string(label)) == "config-2" {
			dev = part
			break
		}
	}
	if dev == "" {
		t.Fatalf("no config-2 partition on %s", r.loop)
	}
	if typ := run(t, "blkid", "-o", "value", "-s", "TYPE", dev); typ != "iso9660" {
		t.Fatalf("%s holds %q, want iso9660", dev, typ)
	}
	f, err := os.Open(dev)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	data := isoFile(t, f, "openstack", "latest", "meta_data.json")
	var meta map[string]any
	if err := json.Unmarshal(data, &meta); err != nil {
		t.Fatalf("meta_data.json on the config drive: %v (%q)", err, data)
	}
	if meta["hostname"] != "ipa-node.example" || meta["uuid"] != id || meta["name"] != "ipa-node" {
		t.Errorf("meta_data.json on the config drive: %s", data)
	}
}

func (r *ipaRig) deploy(id, image, format, checksum string, configdrive ...any) {
	r.t.Helper()
	r.call("PATCH", "/v1/nodes/"+id, []map[string]any{
		{"op": "add", "path": "/instance_info", "value": map[string]any{
			"image_source": r.imgURL + "/" + image, "image_checksum": checksum, "image_disk_format": format}},
	}, 200)
	body := map[string]any{"target": "active"}
	if len(configdrive) > 0 {
		body["configdrive"] = configdrive[0]
	}
	r.call("PUT", "/v1/nodes/"+id+"/states/provision", body, 202)
	r.waitState(id, "wait call-back", 30*time.Second)
	r.startAgent() // the node boots the agent
}

func TestRealIPA(t *testing.T) {
	start := time.Now()
	r := newIPARig(t)
	raw, qcow2 := filepath.Join(r.dir, "images", "disk.raw"), filepath.Join(r.dir, "images", "disk.qcow2")

	n := r.call("POST", "/v1/nodes", map[string]any{"name": "ipa-node", "driver": "fake-hardware", "deploy_interface": "direct"}, 201)
	id := n["uuid"].(string)
	r.call("POST", "/v1/ports", map[string]any{"node_uuid": id, "address": r.mac}, 201)
	r.call("PUT", "/v1/nodes/"+id+"/states/provision", map[string]any{"target": "manage"}, 202)
	r.waitState(id, "manageable", 30*time.Second)
	// provide cleans automatically: through the agent.
	r.call("PUT", "/v1/nodes/"+id+"/states/provision", map[string]any{"target": "provide"}, 202)
	r.waitState(id, "clean wait", 30*time.Second)
	r.startAgent()
	r.waitState(id, "available", 90*time.Second)
	r.stopAgent()
	t.Logf("enrolled and cleaned through the agent: %v", time.Since(start).Round(time.Millisecond))

	t.Run("heartbeat without or with a wrong token is refused", func(t *testing.T) {
		for body, want := range map[string]string{
			`{"callback_url":"http://` + r.agentIP + `:9999"}`:                        "Agent token is required for heartbeat processing.",
			`{"callback_url":"http://` + r.agentIP + `:9999","agent_token":"forged"}`: "Invalid or missing agent token received.",
		} {
			req, _ := http.NewRequest("POST", r.apiURL+"/v1/heartbeat/"+id, strings.NewReader(body))
			req.Header.Set(api.HeaderVersion, "1.68")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			data, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 400 || !strings.Contains(string(data), want) {
				t.Errorf("%s: %d %s", body, resp.StatusCode, data)
			}
		}
	})

	t.Run("raw image", func(t *testing.T) {
		t0 := time.Now()
		r.deploy(id, "disk.raw", "raw", sha256File(t, raw), map[string]any{
			"meta_data": map[string]any{"hostname": "ipa-node.example", "public_keys": map[string]any{"0": "ssh-ed25519 AAAAC3 rivet"}},
			"user_data": "#cloud-config\n"})
		got := r.waitState(id, "active", 120*time.Second)
		r.stopAgent()
		r.verifyDisk("raw")
		r.verifyConfigDrive(id)
		if got["power_state"] != "power on" {
			t.Errorf("power_state %v", got["power_state"])
		}
		t.Logf("raw deploy: %v", time.Since(t0).Round(time.Millisecond))
	})

	t.Run("undeploy with automated cleaning", func(t *testing.T) {
		t0 := time.Now()
		r.call("PUT", "/v1/nodes/"+id+"/states/provision", map[string]any{"target": "deleted"}, 202)
		r.waitState(id, "clean wait", 30*time.Second)
		r.startAgent()
		r.waitState(id, "available", 90*time.Second)
		r.stopAgent()
		f, err := os.Open(r.loop)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		for _, off := range []int64{0, diskSize - mib} {
			buf := make([]byte, mib)
			if _, err := f.ReadAt(buf, off); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(buf, make([]byte, mib)) {
				t.Errorf("the MiB at %d is not zero after cleaning", off)
			}
		}
		t.Logf("undeploy and clean: %v", time.Since(t0).Round(time.Millisecond))
	})

	t.Run("qcow2 image", func(t *testing.T) {
		t0 := time.Now()
		r.deploy(id, "disk.qcow2", "qcow2", "sha256:"+sha256File(t, qcow2))
		r.waitState(id, "active", 120*time.Second)
		r.stopAgent()
		r.verifyDisk("qcow2")
		t.Logf("qcow2 deploy: %v", time.Since(t0).Round(time.Millisecond))
		r.call("PUT", "/v1/nodes/"+id+"/states/provision", map[string]any{"target": "deleted"}, 202)
		r.waitState(id, "clean wait", 30*time.Second)
		r.startAgent()
		r.waitState(id, "available", 90*time.Second)
		r.stopAgent()
	})

	t.Run("wrong checksum", func(t *testing.T) {
		r.deploy(id, "disk.raw", "raw", strings.Repeat("0", 64))
		deadline := time.Now().Add(120 * time.Second)
		for {
			n := r.call("GET", "/v1/nodes/"+id, nil, 200)
			if n["provision_state"] == "deploy failed" {
				msg, _ := n["last_error"].(string)
				if !strings.Contains(msg, "deploy.write_image") || !strings.Contains(strings.ToLower(msg), "checksum") {
					t.Errorf("last_error %q", msg)
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("still %v\n%s", n["provision_state"], r.agentLog())
			}
			time.Sleep(200 * time.Millisecond)
		}
		r.stopAgent()
	})

	t.Run("agent killed mid-deploy", func(t *testing.T) {
		t0 := time.Now()
		r.call("PUT", "/v1/nodes/"+id+"/states/provision", map[string]any{"target": "active"}, 202)
		r.waitState(id, "wait call-back", 30*time.Second)
		r.startAgent()
		// Kill it once it has called back (write_image running, or about to).
		deadline := time.Now().Add(60 * time.Second)
		for {
			n := r.call("GET", "/v1/nodes/"+id+"?fields=driver_internal_info", nil, 200)
			if dii, _ := n["driver_internal_info"].(map[string]any); dii["agent_url"] != nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the agent never called back\n%s", r.agentLog())
			}
			time.Sleep(50 * time.Millisecond)
		}
		r.stopAgent()
		got := r.call("GET", "/v1/nodes/"+id, nil, 200)
		for got["provision_state"] != "deploy failed" && time.Since(t0) < 120*time.Second {
			time.Sleep(500 * time.Millisecond)
			got = r.call("GET", "/v1/nodes/"+id, nil, 200)
		}
		// Killed while waiting, the agent never calls back (the callback
		// timeout); killed as the conductor sends it a step, the command
		// fails after its retries. Either way the deploy fails naming why.
		lastErr := fmt.Sprint(got["last_error"])
		if got["provision_state"] != "deploy failed" || !strings.Contains(lastErr, "Timeout reached while waiting for callback") && !strings.Contains(lastErr, "agent unreachable after") {
			t.Fatalf("after the agent died: %v, %v", got["provision_state"], got["last_error"])
		}
		// The task saves the failed state, then releases its lease: a read
		// in between sees both. The lease must be gone shortly after.
		for released := time.Now().Add(15 * time.Second); got["reservation"] != nil && time.Now().Before(released); {
			time.Sleep(200 * time.Millisecond)
			got = r.call("GET", "/v1/nodes/"+id, nil, 200)
		}
		if got["reservation"] != nil {
			t.Errorf("lease left: %v", got["reservation"])
		}
		t.Logf("killed agent detected by the timeout after %v", time.Since(t0).Round(time.Millisecond))
	})
	if out, _ := os.ReadFile(filepath.Join(r.dir, "shim.log")); len(out) > 0 {
		t.Logf("shims caught: %s", strings.TrimSpace(string(out)))
	}
	t.Logf("real-agent test total: %v", time.Since(start).Round(time.Millisecond))
}
