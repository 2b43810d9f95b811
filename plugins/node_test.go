package plugins

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
)

const secret = "hunter2-secret-value"

func TestIsSecretKey(t *testing.T) {
	tests := map[string]bool{
		"ipmi_password": true, "redfish_password": true, "REDFISH_PASSWORD": true, "auth_token": true,
		"client_secret": true, "snmp_auth_key": true, "snmp_priv_key": true,
		"ipmi_username": false, "redfish_address": false, "key": false, "ipmi_port": false,
	}
	for key, want := range tests {
		if got := IsSecretKey(key); got != want {
			t.Errorf("IsSecretKey(%q) = %v, want %v", key, got, want)
		}
	}
}

// TestDriverInfoNeverPrintsSecrets formats driver_info every way a stray
// log or error could, including nested maps.
func TestDriverInfoNeverPrintsSecrets(t *testing.T) {
	di := DriverInfo{
		"redfish_address":  "https://10.0.0.1",
		"redfish_password": secret,
		"nested":           map[string]any{"token": secret, "port": 443},
	}
	var logged bytes.Buffer
	slog.New(slog.NewJSONHandler(&logged, nil)).Info("x", "driver_info", di, "node", Node{UUID: "u", DriverInfo: di})
	outputs := map[string]string{
		"%v":  fmt.Sprintf("%v", di),
		"%+v": fmt.Sprintf("%+v", di),
		"%#v": fmt.Sprintf("%#v", di),
		"%s":  fmt.Sprintf("%s", di),
		"err": fmt.Errorf("node: %v", di).Error(),
		"log": logged.String(),
	}
	for how, out := range outputs {
		if strings.Contains(out, secret) {
			t.Errorf("%s leaks the secret: %s", how, out)
		}
		if !strings.Contains(out, "10.0.0.1") {
			t.Errorf("%s lost non-secret values: %s", how, out)
		}
	}
	if di["redfish_password"] != secret {
		t.Error("redaction modified the original map")
	}
}

func TestRequire(t *testing.T) {
	di := DriverInfo{"a": "x", "b": "", "c": nil}
	err := di.Require("a", "b", "c", "d")
	var inv *InvalidDriverInfoError
	if !errors.As(err, &inv) || !errors.Is(err, ErrInvalidDriverInfo) {
		t.Fatalf("got %v, want *InvalidDriverInfoError", err)
	}
	if got := strings.Join(inv.Missing, ","); got != "b,c,d" {
		t.Errorf("missing %q, want b,c,d", got)
	}
	if err := di.Require("a"); err != nil {
		t.Errorf("present key reported: %v", err)
	}
}
