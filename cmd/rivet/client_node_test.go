package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rivetmetal/rivet/core/client"
)

// maxAPI is the highest microversion the client knows; the fake serves up
// to it unless a test says otherwise.
var maxAPI = client.MaxVersion.String()

// TestClientCommands runs client commands through run() against the fake
// and checks exit code, output and the requests the fake saw.
func TestClientCommands(t *testing.T) {
	cases := map[string]struct {
		args      []string
		wantCode  int
		wantOut   []string // substrings of stdout
		wantErr   []string // substrings of stderr
		wantCalls []string // requests, in order, with version and body
	}{
		"list as a table": {
			args:      []string{"node", "list"},
			wantOut:   []string{"UUID", "Provision State", "sim-0", "available", "sim-1", "active"},
			wantCalls: []string{maxAPI + " GET /v1/nodes"},
		},
		"list values with fields": {
			args:      []string{"node", "list", "-f", "value", "--fields", "name,provision_state"},
			wantOut:   []string{"sim-0 available\nsim-1 active\n"},
			wantCalls: []string{maxAPI + " GET /v1/nodes?fields=name%2Cprovision_state"},
		},
		"show by name, flags after the node": {
			args:      []string{"node", "show", "sim-0", "--fields", "name,driver_info", "-f", "value"},
			wantOut:   []string{"sim-0\n{\"ipmi_address\":\"10.0.0.1\"}\n"},
			wantCalls: []string{maxAPI + " GET /v1/nodes/sim-0?fields=name%2Cdriver_info"},
		},
		"show as yaml": {
			args:    []string{"node", "show", "sim-1", "-f", "yaml", "--fields", "name,power_state"},
			wantOut: []string{"name: sim-1\npower_state: power on\n"},
		},
		"show a missing node": {
			args:     []string{"node", "show", "sim-9"},
			wantCode: exitClientAPI,
			wantErr:  []string{"node sim-9 not found (rivet node list shows the nodes)"},
		},
		"set and unset send JSON patch": {
			args:      []string{"node", "set", "sim-0", "name=web-1", "properties/cpus:=4"},
			wantCalls: []string{maxAPI + ` PATCH /v1/nodes/sim-0 [{"op":"add","path":"/name","value":"web-1"},{"op":"add","path":"/properties/cpus","value":4}]`},
		},
		// Issue 31: node set had no -f; it prints the node when asked.
		"set -f prints the updated node": {
			args:    []string{"node", "set", "sim-0", "name=web-2", "-f", "value", "--fields", "name"},
			wantOut: []string{"web-2\n"},
		},
		// Issue 31: power actions had no --wait.
		"power on --wait": {
			args:      []string{"node", "power", "on", "sim-0", "--wait", "--interval", "1ms"},
			wantOut:   []string{"node sim-0: power on\n"},
			wantCalls: []string{maxAPI + ` PUT /v1/nodes/sim-0/states/power {"target":"power on"}`, maxAPI + " GET /v1/nodes/sim-0/states"},
		},
		"power off --wait, refused by the BMC": {
			args:     []string{"node", "power", "off", "sim-1", "--wait", "--interval", "1ms"},
			wantCode: exitClientWaitFailed,
			wantErr:  []string{`node sim-1: the power change failed, still "power on" instead of "power off": BMC says no`},
		},
		// Issue 31: port create --node NAME said "could not be found".
		"port create --node NAME looks the name up": {
			args:    []string{"port", "create", "--node", "sim-0", "address=52:54:00:00:00:01", "-f", "value", "--fields", "node_uuid"},
			wantOut: []string{"11111111-0000-0000-0000-000000000000\n"},
			wantCalls: []string{maxAPI + " GET /v1/nodes/sim-0?fields=uuid",
				maxAPI + ` POST /v1/ports {"address":"52:54:00:00:00:01","node_uuid":"11111111-0000-0000-0000-000000000000"}`},
		},
		"port create --node UUID sends it as is": {
			args:      []string{"port", "create", "address=52:54:00:00:00:01", "--node", "22222222-0000-0000-0000-000000000000"},
			wantCalls: []string{maxAPI + ` POST /v1/ports {"address":"52:54:00:00:00:01","node_uuid":"22222222-0000-0000-0000-000000000000"}`},
		},
		"port create --node of a missing node": {
			args:     []string{"port", "create", "--node", "sim-9", "address=52:54:00:00:00:01"},
			wantCode: exitClientAPI,
			wantErr:  []string{"node sim-9 not found (rivet node list shows the nodes)"},
		},
		"unset": {
			args:      []string{"node", "unset", "sim-0", "extra/foo"},
			wantCalls: []string{maxAPI + ` PATCH /v1/nodes/sim-0 [{"op":"remove","path":"/extra/foo"}]`},
		},
		"power on two nodes": {
			args:    []string{"node", "power", "on", "sim-0", "sim-1"},
			wantOut: []string{"node sim-0: power on requested\nnode sim-1: power on requested\n"},
		},
		"power with one missing node reports each": {
			args:     []string{"node", "power", "off", "sim-0", "sim-9"},
			wantCode: exitClientAPI,
			wantOut:  []string{"node sim-0: power off requested"},
			wantErr:  []string{"node sim-9 not found", "1 of 2 nodes failed"},
		},
		"soft power off with a timeout": {
			args:      []string{"node", "power", "off", "--soft", "--power-timeout", "30", "sim-1"},
			wantOut:   []string{"node sim-1: soft power off requested (timeout 30s)\n"},
			wantCalls: []string{maxAPI + " GET /v1", maxAPI + ` PUT /v1/nodes/sim-1/states/power {"target":"soft power off","timeout":30}`},
		},
		"node reboot --soft": {
			args:      []string{"node", "reboot", "--soft", "sim-1"},
			wantOut:   []string{"node sim-1: soft rebooting requested\n"},
			wantCalls: []string{maxAPI + " GET /v1", maxAPI + ` PUT /v1/nodes/sim-1/states/power {"target":"soft rebooting"}`},
		},
		"hard reboot sends no timeout": {
			args:      []string{"node", "reboot", "sim-1"},
			wantCalls: []string{maxAPI + ` PUT /v1/nodes/sim-1/states/power {"target":"rebooting"}`},
		},
		"power on with a timeout": {
			args:      []string{"node", "power", "on", "sim-0", "--power-timeout", "5"},
			wantCalls: []string{maxAPI + " GET /v1", maxAPI + ` PUT /v1/nodes/sim-0/states/power {"target":"power on","timeout":5}`},
		},
		"power timeout must be positive": {
			args:     []string{"node", "power", "on", "sim-0", "--power-timeout", "0"},
			wantCode: exitClientUsage,
			wantErr:  []string{"--power-timeout must be a positive number of seconds"},
		},
		"power on has no --soft": {
			args:     []string{"node", "power", "on", "sim-0", "--soft"},
			wantCode: exitClientUsage,
			wantErr:  []string{"flag provided but not defined: -soft"},
		},
		"deploy --wait": {
			args:    []string{"node", "deploy", "sim-0", "--wait", "--interval", "1ms", "--timeout", "5s"},
			wantOut: []string{"node sim-0: active\n"},
			wantErr: []string{"node sim-0: deploying (waiting for active)", "node sim-0: wait call-back (waiting for active)"},
			wantCalls: []string{
				maxAPI + ` PUT /v1/nodes/sim-0/states/provision {"target":"active"}`,
				maxAPI + " GET /v1/nodes/sim-0/states", maxAPI + " GET /v1/nodes/sim-0/states", maxAPI + " GET /v1/nodes/sim-0/states",
			},
		},
		"api-version 1.99 against a server at the client's max": {
			args:      []string{"node", "list", "--api-version", "1.99"},
			wantCode:  exitClientVersion,
			wantErr:   []string{"API version 1.99 is not supported", "supports 1.1 to " + maxAPI + ", this client supports 1.1 to " + maxAPI},
			wantCalls: []string{"1.99 GET /v1/nodes"},
		},
		"invalid api-version fails before any request": {
			args:     []string{"node", "list", "--api-version", "l33t"},
			wantCode: exitClientUsage,
			wantErr:  []string{`invalid API version "l33t"`},
		},
		"unknown format": {
			args:     []string{"node", "list", "-f", "xml"},
			wantCode: exitClientUsage,
			wantErr:  []string{`unknown format "xml"`},
		},
		"clean with steps": {
			args: []string{"node", "clean", "sim-0", "--clean-steps", `[{"interface":"deploy","step":"erase_devices"}]`},
			wantCalls: []string{
				maxAPI + " PUT /v1/nodes/sim-0/states/provision " + `{"target":"clean","clean_steps":[{"interface":"deploy","step":"erase_devices"}]}`,
			},
		},
		"service with steps": {
			args: []string{"node", "service", "sim-0", "--disable-ramdisk", "--service-steps", `[{"interface":"raid","step":"delete_configuration"}]`},
			wantCalls: []string{
				maxAPI + " PUT /v1/nodes/sim-0/states/provision " + `{"target":"service","service_steps":[{"interface":"raid","step":"delete_configuration"}],"disable_ramdisk":true}`,
			},
		},
		"service without steps": {
			args:     []string{"node", "service", "sim-0"},
			wantCode: exitClientUsage,
			wantErr:  []string{"service needs --service-steps"},
		},
		"unknown flag after the node": {
			args:     []string{"node", "show", "sim-0", "--bogus"},
			wantCode: exitClientUsage,
			wantErr:  []string{"flag provided but not defined: -bogus (see rivet node show --help)"},
		},
		"maintenance with a reason": {
			args:      []string{"node", "maintenance", "set", "sim-1", "--reason", "disk swap"},
			wantOut:   []string{"node sim-1: maintenance on\n"},
			wantCalls: []string{maxAPI + ` PUT /v1/nodes/sim-1/maintenance {"reason":"disk swap"}`},
		},
		"boot device": {
			args:    []string{"node", "boot-device", "show", "sim-0", "-f", "json"},
			wantOut: []string{`"boot_device": "pxe"`, `"persistent": false`},
		},
		"set boot device": {
			args:      []string{"node", "boot-device", "set", "sim-0", "disk", "--persistent"},
			wantCalls: []string{maxAPI + ` PUT /v1/nodes/sim-0/management/boot_device {"boot_device":"disk","persistent":true}`},
		},
		"validate": {
			args:    []string{"node", "validate", "sim-0", "-f", "value"},
			wantOut: []string{"deploy false missing image_source\npower true \n"},
		},
		"driver list": {
			args:    []string{"driver", "list", "-f", "value"},
			wantOut: []string{"fake-hardware [\"c1\"]\n"},
		},
		"driver properties": {
			args:    []string{"driver", "properties", "fake-hardware"},
			wantOut: []string{"ipmi_address", "BMC address. Required."},
		},
		"missing driver": {
			args:     []string{"driver", "show", "nope"},
			wantCode: exitClientAPI,
			wantErr:  []string{"driver nope not found (rivet driver list shows the drivers)"},
		},
		"vif list": {
			args:      []string{"node", "vif", "list", "sim-0", "-f", "value"},
			wantOut:   []string{"vif-1\n"},
			wantCalls: []string{maxAPI + " GET /v1/nodes/sim-0/vifs"},
		},
		"vif attach with extra info": {
			args:      []string{"node", "vif", "attach", "sim-0", "vif-2", "--vif-info", "tag=blue", "--vif-info", "mtu:=9000"},
			wantOut:   []string{"node sim-0: VIF vif-2 attached\n"},
			wantCalls: []string{maxAPI + ` POST /v1/nodes/sim-0/vifs {"id":"vif-2","mtu":9000,"tag":"blue"}`},
		},
		"vif attach refuses the id as info": {
			args:     []string{"node", "vif", "attach", "sim-0", "vif-2", "--vif-info", "id=x"},
			wantCode: exitClientUsage,
			wantErr:  []string{"the VIF id is the second argument"},
		},
		"vif detach two": {
			args:      []string{"node", "vif", "detach", "sim-0", "vif-1", "vif-2"},
			wantOut:   []string{"node sim-0: VIF vif-1 detached\nnode sim-0: VIF vif-2 detached\n"},
			wantCalls: []string{maxAPI + " DELETE /v1/nodes/sim-0/vifs/vif-1", maxAPI + " DELETE /v1/nodes/sim-0/vifs/vif-2"},
		},
		"vif detach needs a vif": {
			args:     []string{"node", "vif", "detach", "sim-0"},
			wantCode: exitClientUsage,
			wantErr:  []string{"give a NODE and at least one VIF id"},
		},
		"inject nmi into two nodes": {
			args:    []string{"node", "inject-nmi", "sim-0", "sim-1"},
			wantOut: []string{"node sim-0: NMI injected\nnode sim-1: NMI injected\n"},
		},
		"create with interface flags": {
			args:      []string{"node", "create", "driver=fake-hardware", "--deploy-interface", "fake", "--inspect-interface", "no-inspect", "-f", "value", "--fields", "uuid"},
			wantCalls: []string{maxAPI + ` POST /v1/nodes {"deploy_interface":"fake","driver":"fake-hardware","inspect_interface":"no-inspect"}`},
			wantOut:   []string{"33333333-0000-0000-0000-000000000000\n"},
		},
		"set interface flags": {
			args: []string{"node", "set", "sim-0", "--network-interface", "noop", "--deploy-interface", "fake"},
			wantCalls: []string{maxAPI + ` PATCH /v1/nodes/sim-0 [{"op":"add","path":"/deploy_interface","value":"fake"},` +
				`{"op":"add","path":"/network_interface","value":"noop"}]`},
		},
		"set a field by flag and by PATH": {
			args:     []string{"node", "set", "sim-0", "deploy_interface=fake", "--deploy-interface", "fake"},
			wantCode: exitClientUsage,
			wantErr:  []string{"--deploy-interface and deploy_interface= both set deploy_interface"},
		},
		"set needs a field": {
			args:     []string{"node", "set", "sim-0"},
			wantCode: exitClientUsage,
			wantErr:  []string{"give the node and at least one PATH=VALUE"},
		},
		"driver show interfaces": {
			args:    []string{"driver", "show", "fake-hardware"},
			wantOut: []string{"type", "dynamic", "Interface", "Default", "Enabled", "deploy", "inspect", "fake, no-inspect"},
		},
		"driver show below 1.30": {
			args:    []string{"driver", "show", "fake-hardware", "--api-version", "1.29", "-f", "json"},
			wantOut: []string{`"name": "fake-hardware"`},
		},
		"clean needs steps": {
			args:     []string{"node", "clean", "sim-0"},
			wantCode: exitClientUsage,
			wantErr:  []string{"clean needs --clean-steps"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			fake, url := newCLIFake(t, "1.1", maxAPI)
			args := append([]string{tc.args[0], "--url", url}, tc.args[1:]...)
			code, out, errOut := runCLI(t, args...)
			if code != tc.wantCode {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tc.wantCode, out, errOut)
			}
			for _, w := range tc.wantOut {
				if !strings.Contains(out, w) {
					t.Errorf("stdout lacks %q:\n%s", w, out)
				}
			}
			for _, w := range tc.wantErr {
				if !strings.Contains(errOut, w) {
					t.Errorf("stderr lacks %q:\n%s", w, errOut)
				}
			}
			if tc.wantCode == exitClientUsage && len(fake.log()) != 0 {
				t.Errorf("a usage error still sent %v", fake.log())
			}
			if tc.wantCalls != nil {
				if diff := cmp.Diff(tc.wantCalls, fake.log()); diff != "" {
					t.Errorf("requests (-want +got):\n%s", diff)
				}
			}
		})
	}
}

// TestSoftPowerAgainstAnOlderAPI: against an API serving up to 1.26
// (release 0.1, or a newer one pinned to it) --soft and --power-timeout fail
// before any node is touched, naming what needs 1.27; a hard action works.
func TestSoftPowerAgainstAnOlderAPI(t *testing.T) {
	fake, url := newCLIFake(t, "1.1", "1.26")
	code, _, errOut := runCLI(t, "node", "power", "off", "--soft", "--power-timeout", "60", "sim-0", "sim-1", "--url", url)
	if code != exitClientVersion || !strings.Contains(errOut, "--soft needs API 1.27, but the server at "+url+"/v1 serves up to 1.26") ||
		!strings.Contains(errOut, "pinned to an older release") {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, call := range fake.log() {
		if strings.Contains(call, "PUT") {
			t.Errorf("a refused soft power off still sent %s", call)
		}
	}
	code, _, errOut = runCLI(t, "node", "reboot", "--soft", "sim-0", "--url", url, "--api-version", "1.26")
	if code != exitClientVersion || !strings.Contains(errOut, "--soft needs API 1.27, but API 1.26 was asked for (use --api-version 1.27 or later") {
		t.Fatalf("--api-version 1.26: exit %d: %s", code, errOut)
	}
	code, _, errOut = runCLI(t, "node", "power", "on", "--power-timeout", "9", "sim-0", "--url", url)
	if code != exitClientVersion || !strings.Contains(errOut, "--power-timeout needs API 1.27") {
		t.Fatalf("--power-timeout: exit %d: %s", code, errOut)
	}
	if code, out, errOut := runCLI(t, "node", "power", "off", "sim-0", "--url", url); code != 0 || !strings.Contains(out, "node sim-0: power off requested") {
		t.Fatalf("hard power off: exit %d: %s %s", code, out, errOut)
	}
}

// TestVIFsOnAnOlderAPI: against an API at 1.26 (an older server, or one
// pinned to release 0.1) the VIF and NMI commands say which version they
// need instead of claiming the node is missing.
func TestVIFsOnAnOlderAPI(t *testing.T) {
	cases := map[string]struct {
		args []string
		want string
	}{
		"vif list":   {[]string{"node", "vif", "list", "sim-0"}, "node sim-0: the node VIF API needs API 1.28, but the server answered at API 1.26"},
		"inject nmi": {[]string{"node", "inject-nmi", "sim-0"}, "node sim-0: NMI injection needs API 1.29, but the server answered at API 1.26"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, url := newCLIFake(t, "1.1", "1.26")
			code, _, errOut := runCLI(t, append(tc.args, "--url", url)...)
			if code != exitClientVersion || !strings.Contains(errOut, tc.want) {
				t.Fatalf("exit %d, stderr %q; want %d and %q", code, errOut, exitClientVersion, tc.want)
			}
		})
	}
}

// TestNegotiatedListSucceedsWhereForcedVersionFails: the same command
// fails with --api-version 1.99 but succeeds without it, at the client's
// max.
func TestNegotiatedListSucceedsWhereForcedVersionFails(t *testing.T) {
	_, url := newCLIFake(t, "1.1", maxAPI)
	if code, _, _ := runCLI(t, "node", "list", "--url", url, "--api-version", "1.99"); code == 0 {
		t.Fatal("--api-version 1.99 exited 0")
	}
	code, out, errOut := runCLI(t, "node", "list", "--url", url, "-f", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var nodes []map[string]any
	if err := json.Unmarshal([]byte(out), &nodes); err != nil || len(nodes) != 2 {
		t.Fatalf("json list: %v %q", err, out)
	}
}

// TestNegotiationIsCachedAcrossInvocations: against a 1.1–1.10 server the
// first invocation negotiates (client max → 1.10) and the second starts at
// 1.10.
func TestNegotiationIsCachedAcrossInvocations(t *testing.T) {
	fake, url := newCLIFake(t, "1.1", "1.10")
	for range 2 {
		if code, _, errOut := runCLI(t, "node", "show", "sim-0", "--url", url); code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
	}
	want := []string{maxAPI + " GET /v1/nodes/sim-0", "1.10 GET /v1/nodes/sim-0", "1.10 GET /v1/nodes/sim-0"}
	if diff := cmp.Diff(want, fake.log()); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
}

func TestDeployWaitFailureReportsLastError(t *testing.T) {
	fake, url := newCLIFake(t, "1.1", maxAPI)
	fake.failWith["sim-0"] = "IPMI said no"
	code, _, errOut := runCLI(t, "node", "--url", url, "deploy", "--wait", "--interval", "1ms", "sim-0")
	if code != exitClientWaitFailed || !strings.Contains(errOut, `reached "deploy failed" instead of "active": IPMI said no`) {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
}

func TestEnvironmentSetsTheClient(t *testing.T) {
	fake, url := newCLIFake(t, "1.1", maxAPI)
	t.Setenv("RIVET_URL", url)
	t.Setenv("RIVET_API_VERSION", "latest")
	if code, _, errOut := runCLI(t, "node", "show", "sim-0"); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	// A flag beats the environment.
	if code, _, _ := runCLI(t, "node", "show", "sim-0", "--api-version", "1.20"); code != 0 {
		t.Fatal("flag version failed")
	}
	want := []string{"latest GET /v1/nodes/sim-0", "1.20 GET /v1/nodes/sim-0"}
	if diff := cmp.Diff(want, fake.log()); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
}

func TestConnectionRefusedIsOneLine(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	code, _, errOut := runCLI(t, "node", "list", "--url", "http://127.0.0.1:1")
	want := "rivet: cannot reach the Rivet API at http://127.0.0.1:1/v1: connection refused (is `rivet dev` running? set --url/RIVET_URL)\n"
	if code != exitClientUnreachable || errOut != want {
		t.Fatalf("exit %d, stderr %q, want %q", code, errOut, want)
	}
}

func TestDebugLogsRequestIDsButNoPassword(t *testing.T) {
	_, url := newCLIFake(t, "1.1", maxAPI)
	code, _, errOut := runCLI(t, "node", "list", "--url", url, "--debug", "--username", "admin", "--password", "sekrit")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(errOut, "request_id=req-cli") || !strings.Contains(errOut, "version_sent="+maxAPI) || strings.Contains(errOut, "sekrit") {
		t.Errorf("debug log:\n%s", errOut)
	}
}

func TestCompletion(t *testing.T) {
	cases := map[string]struct {
		args     []string
		wantCode int
		want     []string
	}{
		"bash":           {args: []string{"completion", "bash"}, want: []string{"complete -o bashdefault -o default -F _rivet_complete rivet", "--generate-bash-completion"}},
		"zsh":            {args: []string{"completion", "zsh"}, want: []string{"#compdef rivet", "compdef _rivet rivet"}},
		"fish":           {args: []string{"completion", "fish"}, want: []string{"complete -c rivet -f -a '(__rivet_complete)'"}},
		"unknown shell":  {args: []string{"completion", "tcsh"}, wantCode: exitClientUsage},
		"node commands":  {args: []string{"node", "--generate-bash-completion"}, want: []string{"list\n", "deploy\n", "maintenance\n"}},
		"power commands": {args: []string{"node", "power", "--generate-bash-completion"}, want: []string{"on\n", "off\n", "reboot\n"}},
		// Issue 31: node names complete, and flags without a "-" typed.
		"node names":       {args: []string{"node", "show", "--url", "URL", "--generate-bash-completion"}, want: []string{"sim-0\nsim-1\n"}},
		"node names again": {args: []string{"node", "deploy", "--url", "URL", "sim-0", "--generate-bash-completion"}, want: []string{"sim-0\nsim-1\n"}},
		"flags of list":    {args: []string{"node", "list", "--generate-bash-completion"}, want: []string{"--fields\n", "--provision-state\n"}},
		"flags after -":    {args: []string{"node", "show", "-", "--generate-bash-completion"}, want: []string{"--fields\n", "--url\n"}},
	}
	_, url := newCLIFake(t, "1.1", maxAPI)
	for name, tc := range cases {
		for i, a := range tc.args {
			if a == "URL" {
				tc.args[i] = url
			}
		}
		t.Run(name, func(t *testing.T) {
			// urfave's completion reads os.Args, not the app's arguments.
			saved := os.Args
			os.Args = append([]string{"rivet"}, tc.args...)
			t.Cleanup(func() { os.Args = saved })
			code, out, _ := runCLI(t, tc.args...)
			if code != tc.wantCode {
				t.Fatalf("exit %d, want %d", code, tc.wantCode)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
		})
	}
}

// TestLatestReportsTheServersChoice is use case 9: "latest" is sent as-is
// and a version newer than the client knows is reported.
func TestLatestReportsTheServersChoice(t *testing.T) {
	cases := map[string]struct {
		max      string
		wantNote bool
	}{
		"newer than the client": {max: "1.99", wantNote: true},
		"the client's max":      {max: maxAPI},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			fake, url := newCLIFake(t, "1.1", tc.max)
			code, _, errOut := runCLI(t, "node", "list", "--url", url, "--api-version", "latest")
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			note := "the server chose API " + tc.max + " for latest; this client knows 1.1 to " + maxAPI
			if got := strings.Contains(errOut, note); got != tc.wantNote {
				t.Errorf("note shown %v, want %v: %q", got, tc.wantNote, errOut)
			}
			if diff := cmp.Diff([]string{"latest GET /v1/nodes"}, fake.log()); diff != "" {
				t.Errorf("requests (-want +got):\n%s", diff)
			}
		})
	}
}

// Connection flags work before the noun too (issue 9's acceptance command).
func TestConnectionFlagsBeforeTheNoun(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-OpenStack-Ironic-API-Minimum-Version", "1.1")
		w.Header().Set("X-OpenStack-Ironic-API-Maximum-Version", "1.26")
		if r.Header.Get("X-OpenStack-Ironic-API-Version") == "1.99" {
			w.WriteHeader(http.StatusNotAcceptable)
			_, _ = w.Write([]byte(`{"error_message": "{\"code\": 406, \"title\": \"Not Acceptable\", \"description\": \"Version 1.99 was requested but the minor version is not supported by this service. The supported version range is: [1.1, 1.26].\"}"}`))
			return
		}
		w.Header().Set("X-OpenStack-Ironic-API-Version", r.Header.Get("X-OpenStack-Ironic-API-Version"))
		_, _ = w.Write([]byte(`{"nodes": []}`))
	}))
	defer srv.Close()
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	code, _, errOut := runCLI(t, "--url", srv.URL, "--api-version", "1.99", "node", "list")
	if code == 0 || !strings.Contains(errOut, "1.26") || !strings.Contains(errOut, "1.99") {
		t.Fatalf("--api-version 1.99 before the noun: exit %d: %s", code, errOut)
	}
	if code, _, errOut := runCLI(t, "--url", srv.URL, "node", "list"); code != 0 {
		t.Fatalf("negotiated list: exit %d: %s", code, errOut)
	}
}

// TestAPIErrorHintsOnlyWhereTheyApply is issue 31's "the node is busy"
// appended to every 409: a duplicate MAC gets none, a lock does.
func TestAPIErrorHintsOnlyWhereTheyApply(t *testing.T) {
	on := clientTarget{kind: client.Ports, ident: ""}
	cases := map[string]struct {
		err  *client.APIError
		want string
	}{
		"duplicate MAC": {&client.APIError{Status: 409, Message: "A port with MAC address 52:54:00:00:00:01 already exists."},
			"port: A port with MAC address 52:54:00:00:00:01 already exists."},
		"node locked": {&client.APIError{Status: 409, Message: "Node sim-0 is locked by host c1, please retry after the current operation is completed."},
			"port: Node sim-0 is locked by host c1, please retry after the current operation is completed. " +
				"(still locked after the client's retries: raise --retries, or see what the node is doing with rivet node show)"},
		"deploy an active node": {&client.APIError{Status: 400, Message: `The requested action "active" can not be performed on node "5d1c0f3e-0000-4000-8000-000000000001" while it is in state "active".`},
			`port: The requested action "active" can not be performed on node "5d1c0f3e-0000-4000-8000-000000000001" while it is in state "active". ` +
				"(it is deployed already: to deploy it again, rivet node undeploy 5d1c0f3e-0000-4000-8000-000000000001 --wait first)"},
		"long message whole": {&client.APIError{Status: 400, Message: strings.Repeat("x ", 200) + "set --driver redfish."},
			"port: " + strings.Repeat("x ", 200) + "set --driver redfish."},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := cliError(tc.err, on).Error(); got != tc.want {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}
