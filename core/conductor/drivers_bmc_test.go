package conductor

import "testing"

// TestBMCOfNeverShowsCredentials: the BMC a driver error and the power
// sync name is its address without the userinfo it may have been written
// with.
func TestBMCOfNeverShowsCredentials(t *testing.T) {
	for name, tc := range map[string]struct {
		info map[string]any
		want string
	}{
		"redfish":           {map[string]any{"redfish_address": "https://10.0.0.1", "redfish_system_id": "/redfish/v1/Systems/1"}, "https://10.0.0.1 /redfish/v1/Systems/1"},
		"redfish userinfo":  {map[string]any{"redfish_address": "https://admin:pw@10.0.0.1"}, "https://***:***@10.0.0.1"},
		"ipmi":              {map[string]any{"ipmi_address": "10.0.0.2", "ipmi_port": 623.0}, "10.0.0.2:623"},
		"ipmi url userinfo": {map[string]any{"ipmi_address": "ipmi://u:p@10.0.0.2"}, "ipmi://***:***@10.0.0.2"},
		"none":              {map[string]any{}, ""},
	} {
		t.Run(name, func(t *testing.T) {
			if got := bmcOfInfo(tc.info); got != tc.want {
				t.Errorf("bmcOfInfo = %q, want %q", got, tc.want)
			}
		})
	}
}
