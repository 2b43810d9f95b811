package api_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/kdomanski/iso9660"

	"github.com/rivetmetal/rivet/core/conductor/agentclient/agenttest"
	"github.com/rivetmetal/rivet/drivers/redfish/sim"
	"github.com/rivetmetal/rivet/test/testenv"
)

// ipaVersion is the API version the ramdisk's lookup, heartbeat and
// inspection data use (IPA sends its token from 1.62).
const ipaVersion = "1.62"

// ramdisk plays the ironic-python-agent of one simulated machine: each
// time the machine boots the virtual-media ISO it "starts" a fresh fake
// agent, which looks its node up by MAC, heartbeats while the node waits
// for it, and in "inspect wait" posts IPA 9.14.1's inspection data (its
// interfaces replaced by the machine's NICs) to /v1/continue_inspection.
type ramdisk struct {
	t       *testing.T
	apiURL  string
	bmc     *sim.Simulator
	system  string   // the simulator's system id
	macs    []string // the machine's NICs
	isoWant string   // the ISO the agent boots from (driver_info deploy_iso)

	mu          sync.Mutex
	bootSeen    int // sim Boots of the current agent
	agent       *agenttest.Agent
	agentURL    string
	token       string
	inspected   int    // sim Boots whose inventory was posted
	configDrive string // write_image's, as sent
	// ran lists the agent commands and clean/deploy steps received, over
	// every boot: "clean.execute_clean_step erase_devices_metadata", …
	ran []string
}

// booted reports whether the machine is on, booted from the agent ISO.
func (r *ramdisk) booted() (int, bool) {
	st, err := r.bmc.System(r.system)
	if err != nil {
		r.t.Fatal(err)
	}
	return st.Boots, st.PowerState == "On" && st.LastBootSource == "Cd" && st.LastBootImage == r.isoWant
}

// tick acts once as the agent would for a node in state: nothing unless
// the machine runs the agent ISO.
func (r *ramdisk) tick(ctx context.Context, node, state string) {
	boots, up := r.booted()
	if !up {
		return
	}
	switch state {
	case "inspect wait":
		if r.inspected == boots {
			return
		}
		r.inspected = boots
		r.postInventory(ctx, node)
	case "clean wait", "wait call-back", "service wait":
		if r.bootSeen != boots && !r.start(ctx, boots) {
			return
		}
		body := map[string]any{"callback_url": r.agentURL, "agent_token": r.token, "agent_version": "9.14.1"}
		code, err := agenttest.Heartbeat(ctx, http.DefaultClient, r.apiURL, ipaVersion, node, body)
		// 409: the conductor holds the node (IPA retries at its next beat).
		if err != nil || (code != http.StatusAccepted && code != http.StatusConflict) {
			// The conductor may have finished and powered the machine off
			// (forgetting the token) between the state read and the beat:
			// the agent is gone, as a real one would be.
			if now, up := r.booted(); err == nil && (!up || now != boots) {
				return
			}
			r.t.Errorf("heartbeat of %s in %s: %d %v", node, state, code, err)
		}
	}
}

// start boots a fresh agent: lookup by MAC (the token comes with it). It
// reports false when the machine went down before the lookup answered.
func (r *ramdisk) start(ctx context.Context, boots int) bool {
	if r.agent != nil {
		r.agent.Close()
	}
	a := agenttest.New()
	record := func(kind string) agenttest.Handler {
		return func(_ context.Context, p map[string]any) (map[string]any, error) {
			step, _ := p["step"].(map[string]any)
			r.mu.Lock()
			r.ran = append(r.ran, fmt.Sprintf("%s %v", kind, step["step"]))
			r.mu.Unlock()
			switch kind {
			case "clean":
				return map[string]any{"clean_result": nil, "clean_step": step}, nil
			case "service":
				return map[string]any{"service_result": nil, "service_step": step}, nil
			}
			return map[string]any{"deploy_result": nil, "deploy_step": step}, nil
		}
	}
	a.Handle("clean.get_clean_steps", func(context.Context, map[string]any) (map[string]any, error) {
		// IPA's GenericHardwareManager's steps that matter here.
		return map[string]any{
			"clean_steps": map[string]any{"GenericHardwareManager": []any{
				map[string]any{"step": "erase_devices", "priority": 10, "interface": "deploy", "abortable": true},
				map[string]any{"step": "erase_devices_metadata", "priority": 99, "interface": "deploy", "abortable": true},
			}},
			"hardware_manager_version": map[string]any{"generic_hardware_manager": "1.2"},
		}, nil
	})
	a.Handle("clean.execute_clean_step", record("clean"))
	a.Handle("deploy.execute_deploy_step", func(ctx context.Context, p map[string]any) (map[string]any, error) {
		step, _ := p["step"].(map[string]any)
		args, _ := step["args"].(map[string]any)
		if step["step"] == "write_image" {
			drive, _ := args["configdrive"].(string)
			if drive == "" {
				return nil, fmt.Errorf("write_image without a configdrive")
			}
			r.mu.Lock()
			r.configDrive = drive
			r.mu.Unlock()
		}
		return record("deploy")(ctx, p)
	})
	a.Handle("service.execute_service_step", record("service"))
	_, token, err := agenttest.Lookup(ctx, http.DefaultClient, r.apiURL, ipaVersion, r.macs...)
	if err != nil {
		if now, up := r.booted(); !up || now != boots {
			return false
		}
		r.t.Fatalf("agent lookup by %v: %v", r.macs, err)
	}
	a.Token = token // before it serves: the conductor's commands must carry it
	r.agentURL = a.Start()
	r.t.Cleanup(a.Close)
	r.agent, r.token, r.bootSeen = a, token, boots
	return true
}

// postInventory sends IPA's inspection data with the machine's NICs.
func (r *ramdisk) postInventory(ctx context.Context, node string) {
	data, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "core", "api", "testdata", "ipa-9.14.1-inspection.json"))
	if err != nil {
		r.t.Fatal(err)
	}
	var body map[string]any
	if err := json.Unmarshal(data, &body); err != nil {
		r.t.Fatal(err)
	}
	inv := body["inventory"].(map[string]any)
	tmpl := inv["interfaces"].([]any)[0].(map[string]any)
	var ifaces []any
	for i, mac := range r.macs {
		nic := map[string]any{}
		for k, v := range tmpl {
			nic[k] = v
		}
		nic["name"], nic["mac_address"] = fmt.Sprintf("eno%d", i+1), mac
		if i > 0 {
			nic["ipv4_address"], nic["ipv6_address"] = nil, nil
		}
		ifaces = append(ifaces, nic)
	}
	inv["interfaces"] = ifaces
	// The capture's dmidecode failed in its container: a real machine's
	// ramdisk reports no error.
	body["error"] = nil
	body["boot_interface"] = "01-" + strings.ReplaceAll(r.macs[0], ":", "-")
	out, _ := json.Marshal(body)
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, r.apiURL+"/v1/continue_inspection", bytes.NewReader(out))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-OpenStack-Ironic-API-Version", "1.84")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		r.t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		r.t.Fatalf("continue_inspection of %s: HTTP %d, want 202", node, resp.StatusCode)
	}
}

// commands is what the agents ran so far.
func (r *ramdisk) commands() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.ran...)
}

// isoFile reads the file at path (one name per level) from the ISO 9660
// image img; nil when it is missing.
func isoFile(t *testing.T, img io.ReaderAt, path ...string) []byte {
	t.Helper()
	iso, err := iso9660.OpenImage(img)
	if err != nil {
		t.Fatal(err)
	}
	dir, err := iso.RootDir()
	if err != nil {
		t.Fatal(err)
	}
	for i, name := range path {
		kids, err := dir.GetChildren()
		if err != nil {
			t.Fatal(err)
		}
		var next *iso9660.File
		for _, k := range kids {
			if k.Name() == name {
				next = k
			}
		}
		if next == nil {
			return nil
		}
		if i == len(path)-1 {
			data, err := io.ReadAll(next.Reader())
			if err != nil {
				t.Fatal(err)
			}
			return data
		}
		dir = next
	}
	return nil
}

// configDriveFile reads a file of the config drive the agent was sent
// (base64 of a gzipped ISO, as Ironic sends it).
func configDriveFile(t *testing.T, drive string, path ...string) []byte {
	t.Helper()
	raw, err := base64.StdEncoding.DecodeString(drive)
	if err != nil {
		t.Fatalf("configdrive is not base64: %v", err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("configdrive is not gzipped: %v", err)
	}
	img, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return isoFile(t, bytes.NewReader(img), path...)
}
