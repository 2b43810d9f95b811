package conductor

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/kdomanski/iso9660"

	"github.com/rivetmetal/rivet/core/objects"
)

// isoFiles decodes a built config drive and returns its volume label and
// files by path.
func isoFiles(t *testing.T, cd string) (string, map[string]string) {
	t.Helper()
	gz, err := base64.StdEncoding.DecodeString(cd)
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		t.Fatal(err)
	}
	iso, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	img, err := iso9660.OpenImage(bytes.NewReader(iso))
	if err != nil {
		t.Fatal(err)
	}
	label, err := img.Label()
	if err != nil {
		t.Fatal(err)
	}
	root, err := img.RootDir()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	var walk func(f *iso9660.File, prefix string)
	walk = func(f *iso9660.File, prefix string) {
		kids, err := f.GetChildren()
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range kids {
			if k.IsDir() {
				walk(k, prefix+k.Name()+"/")
				continue
			}
			data, _ := io.ReadAll(k.Reader())
			out[prefix+k.Name()] = string(data)
		}
	}
	walk(root, "")
	return label, out
}

// A config drive given as an object becomes a config-2 ISO9660 image with
// openstack/latest/{meta_data.json,user_data,network_data.json,
// vendor_data2.json}; meta_data's uuid and name default to the node's.
func TestBuildConfigDrive(t *testing.T) {
	name := "web-1"
	n := &objects.Node{UUID: "1be26c0b-03f2-4d2e-ae87-c02d7f33c123", Name: &name}
	cd, err := buildConfigDrive(n, map[string]any{
		"meta_data":    map[string]any{"public_keys": map[string]any{"0": "ssh-ed25519 AAAA"}},
		"user_data":    "#cloud-config\nhostname: web-1\n",
		"network_data": map[string]any{"links": []any{}},
		"vendor_data":  map[string]any{"rack": "r1"},
	})
	if err != nil {
		t.Fatal(err)
	}
	label, files := isoFiles(t, cd)
	if label != "config-2" {
		t.Errorf("label %q", label)
	}
	var meta map[string]any
	if err := json.Unmarshal([]byte(files["openstack/latest/meta_data.json"]), &meta); err != nil {
		t.Fatalf("meta_data.json: %v (files %v)", err, files)
	}
	if meta["uuid"] != n.UUID || meta["name"] != "web-1" || meta["public_keys"] == nil {
		t.Errorf("meta_data %v", meta)
	}
	if files["openstack/latest/user_data"] != "#cloud-config\nhostname: web-1\n" ||
		!strings.Contains(files["openstack/latest/network_data.json"], "links") ||
		!strings.Contains(files["openstack/latest/vendor_data2.json"], "r1") {
		t.Errorf("files %v", files)
	}
	if _, err := buildConfigDrive(n, map[string]any{"meta_data": "x"}); err == nil {
		t.Error("a string meta_data was accepted")
	}
}

// Without a network_data of its own the config drive carries the node's
// (API 1.66); one given with the deploy wins; a node without any gets no
// network_data.json.
func TestConfigDriveNodeNetworkData(t *testing.T) {
	nodeND := map[string]any{"links": []any{map[string]any{"id": "eth0", "type": "phy", "ethernet_mac_address": "52:54:00:00:00:01"}},
		"networks": []any{}, "services": []any{}}
	n := &objects.Node{UUID: "1be26c0b-03f2-4d2e-ae87-c02d7f33c123", NetworkData: nodeND}
	cd, err := buildConfigDrive(n, map[string]any{"user_data": "#cloud-config\n"})
	if err != nil {
		t.Fatal(err)
	}
	_, files := isoFiles(t, cd)
	var got map[string]any
	if err := json.Unmarshal([]byte(files["openstack/latest/network_data.json"]), &got); err != nil {
		t.Fatalf("network_data.json: %v (files %v)", err, files)
	}
	if links, _ := got["links"].([]any); len(links) != 1 || links[0].(map[string]any)["id"] != "eth0" {
		t.Errorf("network_data.json from the node: %v", got)
	}
	cd, err = buildConfigDrive(n, map[string]any{"network_data": map[string]any{"links": []any{}, "networks": []any{}, "services": []any{"given"}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, files = isoFiles(t, cd); !strings.Contains(files["openstack/latest/network_data.json"], "given") {
		t.Errorf("the deploy's network_data lost: %v", files["openstack/latest/network_data.json"])
	}
	cd, err = buildConfigDrive(&objects.Node{UUID: n.UUID}, map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	if _, files = isoFiles(t, cd); files["openstack/latest/network_data.json"] != "" {
		t.Errorf("network_data.json without any: %q", files["openstack/latest/network_data.json"])
	}
}
