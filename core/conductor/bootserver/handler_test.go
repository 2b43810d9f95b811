package bootserver

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const (
	uuidA = "1be26c0b-03f2-4d2e-ae87-c02d7f33c123"
	macA  = "52:54:00:12:34:56"
	uuidB = "2ce26c0b-03f2-4d2e-ae87-c02d7f33c456"
)

// fakeSource serves nodes from maps and counts lookups.
type fakeSource struct {
	byUUID map[string]Node
	byMAC  map[string]string // MAC → UUID
	err    error
}

func (f *fakeSource) NodeByUUID(_ context.Context, uuid string) (Node, error) {
	if f.err != nil {
		return Node{}, f.err
	}
	n, ok := f.byUUID[uuid]
	if !ok {
		return Node{}, ErrNotFound
	}
	return n, nil
}

func (f *fakeSource) NodeByMAC(ctx context.Context, mac string) (Node, error) {
	uuid, ok := f.byMAC[mac]
	if !ok {
		return Node{}, ErrNotFound
	}
	return f.NodeByUUID(ctx, uuid)
}

func ramdiskInfo() map[string]any {
	return map[string]any{
		KeyKernel: "http://images.example/deploy.kernel", KeyRamdisk: "https://images.example/deploy.initramfs?sig=ab&exp=9",
		KeyKernelAppendParams: "console=ttyS0,115200n8 ipa-debug=1", KeyBootMode: "uefi",
		"image_checksum": "SECRET-CHECKSUM", "configdrive": "SECRET-CONFIGDRIVE",
	}
}

func TestHandler(t *testing.T) {
	ramdiskScript := "#!ipxe\n# rivet: node " + uuidA + ", deploying\n" +
		"# boot_mode uefi: set by the driver with the PXE boot override\nimgfree\n" +
		"kernel http://images.example/deploy.kernel initrd=ramdisk console=ttyS0,115200n8 ipa-debug=1\n" +
		"initrd --name ramdisk https://images.example/deploy.initramfs?sig=ab&exp=9\nboot\n"
	tests := map[string]struct {
		node  Node
		err   error // from the source
		path  string
		code  int
		body  string
		inLog []string
	}{
		"kernel and ramdisk by MAC": {
			node: Node{UUID: uuidA, ProvisionState: "deploying", InstanceInfo: ramdiskInfo()},
			path: "/ipxe/" + macA, code: 200, body: ramdiskScript, inLog: []string{"iPXE script served", "boots=ramdisk"},
		},
		"by upper-case hyphenated MAC": {
			node: Node{UUID: uuidA, ProvisionState: "deploying", InstanceInfo: ramdiskInfo()},
			path: "/ipxe/52-54-00-12-34-56", code: 200, body: ramdiskScript,
		},
		"by hexraw MAC": {
			node: Node{UUID: uuidA, ProvisionState: "deploying", InstanceInfo: ramdiskInfo()},
			path: "/ipxe/525400123456", code: 200, body: ramdiskScript,
		},
		"by upper-case UUID": {
			node: Node{UUID: uuidA, ProvisionState: "deploying", InstanceInfo: ramdiskInfo()},
			path: "/ipxe/" + strings.ToUpper(uuidA), code: 200, body: ramdiskScript,
		},
		"ISO while waiting for call-back, no params": {
			node: Node{UUID: uuidA, ProvisionState: "wait call-back", InstanceInfo: map[string]any{
				KeyBootISO: "https://images.example/deploy.iso", KeyKernel: "http://ignored.example/k", KeyBootMode: " BIOS"}},
			path: "/ipxe/" + uuidA, code: 200,
			body: "#!ipxe\n# rivet: node " + uuidA + ", wait call-back\n" +
				"# boot_mode bios: set by the driver with the PXE boot override\nimgfree\n" +
				"sanboot --no-describe https://images.example/deploy.iso\n",
			inLog: []string{"boots=iso"},
		},
		"active keeps booting the ramdisk; odd boot_mode not echoed": {
			node: Node{UUID: uuidA, ProvisionState: "active", InstanceInfo: map[string]any{
				KeyKernel: "http://i.example/k", KeyRamdisk: "http://i.example/r", KeyBootMode: "uefi\nshell"}},
			path: "/ipxe/" + macA, code: 200,
			body: "#!ipxe\n# rivet: node " + uuidA + ", active\nimgfree\n" +
				"kernel http://i.example/k initrd=ramdisk\ninitrd --name ramdisk http://i.example/r\nboot\n",
		},
		"available exits to local disk": {
			node: Node{UUID: uuidA, ProvisionState: "available", InstanceInfo: ramdiskInfo()},
			path: "/ipxe/" + macA, code: 200, body: localBody, inLog: []string{"boots=local"},
		},
		"deploy failed exits to local disk even with bad URLs": {
			node: Node{UUID: uuidA, ProvisionState: "deploy failed", InstanceInfo: map[string]any{KeyKernel: "x\nshell"}},
			path: "/ipxe/" + macA, code: 200, body: localBody,
		},
		"unknown UUID": {
			node: Node{UUID: uuidA, ProvisionState: "deploying", InstanceInfo: ramdiskInfo()},
			path: "/ipxe/" + uuidB, code: 404, body: "rivet: no node has this UUID or port MAC address\n",
		},
		"unknown MAC": {
			node: Node{UUID: uuidA, ProvisionState: "deploying", InstanceInfo: ramdiskInfo()},
			path: "/ipxe/52:54:00:00:00:01", code: 404, body: "rivet: no node has this UUID or port MAC address\n",
		},
		"neither UUID nor MAC (a node name)": {
			node: Node{UUID: uuidA, ProvisionState: "deploying", InstanceInfo: ramdiskInfo()},
			path: "/ipxe/node-1", code: 404, body: "rivet: no node has this UUID or port MAC address\n",
		},
		"database error": {
			err:  errors.New("connection refused"),
			path: "/ipxe/" + uuidA, code: 500, body: "rivet: node lookup failed, see the conductor log\n",
			inLog: []string{"connection refused"},
		},
		"userinfo scrubbed": {
			node: Node{UUID: uuidA, ProvisionState: "deploying", InstanceInfo: map[string]any{
				KeyKernel: "http://admin:SECRET-PW@i.example/k", KeyRamdisk: "http://SECRET-TOKEN@i.example/r"}},
			path: "/ipxe/" + uuidA, code: 200,
			body: "#!ipxe\n# rivet: node " + uuidA + ", deploying\nimgfree\n" +
				"kernel http://i.example/k initrd=ramdisk\ninitrd --name ramdisk http://i.example/r\nboot\n",
			inLog: []string{"removed userinfo", "keys=\"[kernel ramdisk]\""},
		},
		"newline injection refused": {
			node: Node{UUID: uuidA, ProvisionState: "deploying", InstanceInfo: map[string]any{
				KeyKernel: "http://i.example/k\n#!ipxe\nshell", KeyRamdisk: "http://i.example/r"}},
			path: "/ipxe/" + uuidA, code: 200, body: refusedBody,
			inLog: []string{"iPXE script refused", "node=" + uuidA, "kernel: a newline at offset 18"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			src := &fakeSource{byUUID: map[string]Node{tc.node.UUID: tc.node}, byMAC: map[string]string{macA: uuidA}, err: tc.err}
			var logs bytes.Buffer
			h := NewHandler(src, slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, tc.path, nil))
			if rec.Code != tc.code {
				t.Errorf("status %d, want %d", rec.Code, tc.code)
			}
			if diff := cmp.Diff(tc.body, rec.Body.String()); diff != "" {
				t.Errorf("body (-want +got):\n%s", diff)
			}
			if ct := rec.Header().Get("Content-Type"); ct != "text/plain; charset=utf-8" {
				t.Errorf("Content-Type %q", ct)
			}
			if cc := rec.Header().Get("Cache-Control"); cc != "no-store" {
				t.Errorf("Cache-Control %q", cc)
			}
			for _, want := range tc.inLog {
				if !strings.Contains(logs.String(), want) {
					t.Errorf("log lacks %q:\n%s", want, logs.String())
				}
			}
			if out := rec.Body.String() + logs.String(); strings.Contains(out, "SECRET") {
				t.Errorf("a secret reached the body or the log:\n%s", out)
			}
		})
	}
}

func TestHandlerRoutes(t *testing.T) {
	src := &fakeSource{byUUID: map[string]Node{}}
	h := NewHandler(src, nil)
	for path, want := range map[string]struct {
		method string
		code   int
	}{
		"/ipxe/" + uuidA:    {http.MethodPost, http.StatusMethodNotAllowed},
		"/ipxe/":            {http.MethodGet, http.StatusNotFound},
		"/ipxe/a/b":         {http.MethodGet, http.StatusNotFound},
		"/v1/nodes":         {http.MethodGet, http.StatusNotFound},
		"/ipxe/" + macA:     {http.MethodHead, http.StatusNotFound},
		"/ipxe/%0a" + uuidA: {http.MethodGet, http.StatusNotFound},
	} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(want.method, path, nil))
		if rec.Code != want.code {
			t.Errorf("%s %s: status %d, want %d", want.method, path, rec.Code, want.code)
		}
	}
}
