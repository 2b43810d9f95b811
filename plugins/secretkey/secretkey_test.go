package secretkey

import "testing"

func TestIs(t *testing.T) {
	tests := map[string]bool{
		"ipmi_password": true, "Redfish_PASSWORD": true, "auth_token": true, "client_secret": true,
		"snmp_auth_key": true, "snmp_priv_key": true, "ssh_private_key": true, "configdrive": true,
		"ipmi_username": false, "redfish_address": false, "key": false, "ipmi_port": false, "": false,
	}
	for key, want := range tests {
		t.Run(key, func(t *testing.T) {
			if got := Is(key); got != want {
				t.Errorf("Is(%q) = %v, want %v", key, got, want)
			}
		})
	}
}
