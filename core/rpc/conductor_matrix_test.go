package rpc

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/rivetmetal/rivet/core/version"
)

// methodsAt is the conductor table as a release speaking RPC at ver had it:
// the methods and arguments introduced up to ver.
func methodsAt(t *testing.T, ver version.Version) *Methods {
	t.Helper()
	all := ConductorMethods()
	var ms []Method
	for _, name := range all.Names() {
		m, _ := all.Lookup(name)
		if !m.Since.ServedBy(ver) {
			continue
		}
		var args []Arg
		for _, a := range m.Args {
			if !a.Since.ServedBy(ver) {
				continue
			}
			values := map[string]version.Version{}
			for val, since := range a.Values {
				if since.ServedBy(ver) {
					values[val] = since
				}
			}
			a.Values = values
			args = append(args, a)
		}
		m.Args = args
		ms = append(ms, m)
	}
	old, err := NewMethods(ver, ms...)
	if err != nil {
		t.Fatal(err)
	}
	return old
}

// TestNodeVIFAndNMIMatrix: vif_list, vif_attach, vif_detach (RPC 1.2) and
// inject_nmi (1.3) against clients capped at each version and conductors of
// each version. A capped client refuses before sending (*CapError, the REST
// API's 406); an unpinned client reaching an older conductor gets
// UnsupportedVersion; otherwise the call is sent at the method's version.
func TestNodeVIFAndNMIMatrix(t *testing.T) {
	calls := map[string]map[string]any{
		"vif_list":   {"node_id": "n1"},
		"vif_attach": {"node_id": "n1", "vif_info": map[string]any{"id": "vif-1", "extra": "kept"}},
		"vif_detach": {"node_id": "n1", "vif_id": "vif-1"},
		"inject_nmi": {"node_id": "n1"},
	}
	since := map[string]string{"vif_list": "1.2", "vif_attach": "1.2", "vif_detach": "1.2", "inject_nmi": "1.3"}
	methodMatrix(t, calls, since, []string{"1.0", "1.1", "1.2", "1.3"})
}

// TestNodeTraitsMatrix: add_node_traits and remove_node_traits (RPC 1.5,
// REST API 1.37) as TestNodeVIFAndNMIMatrix: a client capped at release
// 0.2's 1.4 refuses them before sending.
func TestNodeTraitsMatrix(t *testing.T) {
	calls := map[string]map[string]any{
		"add_node_traits":    {"node_id": "n1", "traits": []string{"CUSTOM_A"}, "replace": true},
		"remove_node_traits": {"node_id": "n1"},
	}
	since := map[string]string{"add_node_traits": "1.5", "remove_node_traits": "1.5"}
	methodMatrix(t, calls, since, []string{"1.4", "1.5"})
}

// methodMatrix calls each method with its arguments from clients capped
// at each of versions to conductors of each of versions.
func methodMatrix(t *testing.T, calls map[string]map[string]any, since map[string]string, versions []string) {
	t.Helper()
	for _, capS := range versions {
		for _, serverS := range versions {
			t.Run(fmt.Sprintf("cap %s/server %s", capS, serverS), func(t *testing.T) {
				capV, serverV := v(capS), v(serverS)
				srv := echoServer(t, methodsAt(t, serverV))
				c := NewClient(ConductorMethods(), func() version.Version { return capV }, PlainCodec{}, LocalTransport{Server: srv})
				for method, args := range calls {
					needs := v(since[method])
					if got := c.CanSend(method); got != needs.ServedBy(capV) {
						t.Errorf("CanSend(%s) = %v under cap %s", method, got, capV)
					}
					reply, err := c.Call(context.Background(), "local", method, args)
					var ce *CapError
					var re *RemoteError
					switch {
					case !needs.ServedBy(capV):
						if !errors.As(err, &ce) || ce.Method != method || ce.Needs != needs {
							t.Errorf("%s under cap %s: %v, want a CapError", method, capV, err)
						}
					case !needs.ServedBy(serverV):
						if !errors.As(err, &re) || re.Class != "UnsupportedVersion" {
							t.Errorf("%s to a %s conductor: %v, want UnsupportedVersion", method, serverV, err)
						}
					case err != nil:
						t.Errorf("%s: %v", method, err)
					default:
						var got map[string]any
						if err := reply.Decode(&got); err != nil {
							t.Fatal(err)
						}
						if got["version"] != needs.String() {
							t.Errorf("%s sent at %v, want %s", method, got["version"], needs)
						}
					}
				}
			})
		}
	}
}

// TestManagement2Matrix: the management interface version 2 methods (RPC
// 1.5; REST API 1.63, 1.76, 1.89, 1.93) as TestNodeVIFAndNMIMatrix: a client
// capped at release 0.2's 1.4 refuses them before sending, a 1.4 conductor
// answers UnsupportedVersion.
func TestManagement2Matrix(t *testing.T) {
	calls := map[string]map[string]any{
		"change_node_boot_mode":    {"node_id": "n1", "new_state": "uefi"},
		"change_node_secure_boot":  {"node_id": "n1", "new_state": true},
		"get_supported_indicators": {"node_id": "n1"},
		"get_indicator_state":      {"node_id": "n1", "component": "system", "indicator": "led"},
		"set_indicator_state":      {"node_id": "n1", "component": "system", "indicator": "led", "state": "ON"},
		"get_virtual_media":        {"node_id": "n1"},
		"attach_virtual_media":     {"node_id": "n1", "device_type": "cdrom", "image_url": "http://img/x.iso", "image_download_source": "http"},
		"detach_virtual_media":     {"node_id": "n1", "device_types": []string{"cdrom"}},
	}
	since := map[string]string{}
	for m := range calls {
		since[m] = "1.5"
	}
	methodMatrix(t, calls, since, []string{"1.4", "1.5"})
}

// TestConsoleMatrix: set_console_mode and get_console_information (RPC
// 1.5, REST API console states) as TestNodeTraitsMatrix: a client capped at
// release 0.2's 1.4 refuses them before sending.
func TestConsoleMatrix(t *testing.T) {
	calls := map[string]map[string]any{
		"set_console_mode":        {"node_id": "n1", "enabled": true},
		"get_console_information": {"node_id": "n1"},
	}
	since := map[string]string{"set_console_mode": "1.5", "get_console_information": "1.5"}
	methodMatrix(t, calls, since, []string{"1.4", "1.5"})
}

// TestReservedStepsMatrix: service steps named after a reserved step (RPC
// 1.6 values of do_node_service's service_steps, matched on each step's
// "step") and the unhold action (1.6) against clients capped at and
// conductors of 1.5 and 1.6: a 1.5 client refuses them before sending,
// a 1.5 conductor answers UnsupportedVersion; other steps and actions go
// at their old versions.
func TestReservedStepsMatrix(t *testing.T) {
	raid := map[string]any{"interface": "raid", "step": "delete_configuration"}
	hold := map[string]any{"interface": "deploy", "step": "hold"}
	calls := []struct {
		method string
		args   map[string]any
		needs  string
	}{
		{"do_node_service", map[string]any{"node_id": "n1", "service_steps": []any{raid}}, "1.5"},
		{"do_node_service", map[string]any{"node_id": "n1", "service_steps": []any{raid, hold}}, "1.6"},
		{"do_node_service", map[string]any{"node_id": "n1", "service_steps": []any{map[string]any{"interface": "hold", "step": "x"}}}, "1.5"},
		{"do_provisioning_action", map[string]any{"node_id": "n1", "action": "abort"}, "1.0"},
		{"do_provisioning_action", map[string]any{"node_id": "n1", "action": "unhold"}, "1.6"},
	}
	for _, capS := range []string{"1.5", "1.6"} {
		for _, serverS := range []string{"1.5", "1.6"} {
			t.Run(fmt.Sprintf("cap %s/server %s", capS, serverS), func(t *testing.T) {
				capV, serverV := v(capS), v(serverS)
				c := NewClient(ConductorMethods(), func() version.Version { return capV }, PlainCodec{},
					LocalTransport{Server: echoServer(t, methodsAt(t, serverV))})
				for _, call := range calls {
					needs := v(call.needs)
					reply, err := c.Call(context.Background(), "local", call.method, call.args)
					var ce *CapError
					var re *RemoteError
					switch {
					case !needs.ServedBy(capV):
						if !errors.As(err, &ce) || ce.Needs != needs {
							t.Errorf("%s %v under cap %s: %v, want a CapError", call.method, call.args, capV, err)
						}
					case !needs.ServedBy(serverV):
						if !errors.As(err, &re) || re.Class != "UnsupportedVersion" {
							t.Errorf("%s %v to a %s conductor: %v, want UnsupportedVersion", call.method, call.args, serverV, err)
						}
					case err != nil:
						t.Errorf("%s %v: %v", call.method, call.args, err)
					default:
						var got map[string]any
						if err := reply.Decode(&got); err != nil {
							t.Fatal(err)
						}
						if got["version"] != needs.String() {
							t.Errorf("%s %v sent at %v, want %s", call.method, call.args, got["version"], needs)
						}
					}
				}
			})
		}
	}
}
