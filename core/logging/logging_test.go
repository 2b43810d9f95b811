package logging

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"
)

func TestNew(t *testing.T) {
	tests := map[string]struct {
		format, level string
		wantErr       string
		check         func(t *testing.T, out string)
	}{
		"text": {format: "text", level: "info", check: func(t *testing.T, out string) {
			if !strings.Contains(out, "msg=hello") || strings.Contains(out, "hidden") {
				t.Errorf("text output %q", out)
			}
		}},
		"json": {format: "JSON", level: "INFO", check: func(t *testing.T, out string) {
			var rec map[string]any
			if err := json.Unmarshal([]byte(strings.Split(out, "\n")[0]), &rec); err != nil || rec["msg"] != "hello" {
				t.Errorf("json output %q: %v", out, err)
			}
		}},
		"bad format": {format: "xml", level: "info", wantErr: `unknown log format "xml": valid values are text, json`},
		"bad level":  {format: "text", level: "loud", wantErr: `unknown log level "loud": valid values are debug, info, warn, error`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var buf bytes.Buffer
			log, _, err := New(&buf, tc.format, tc.level)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			log.Debug("hidden")
			log.Info("hello")
			tc.check(t, buf.String())
		})
	}
}

func TestLevelVarChangesAtRuntime(t *testing.T) {
	var buf bytes.Buffer
	log, lv, err := New(&buf, "text", "error")
	if err != nil {
		t.Fatal(err)
	}
	log.Info("before")
	lv.Set(slog.LevelDebug)
	log.Debug("after")
	if out := buf.String(); strings.Contains(out, "before") || !strings.Contains(out, "after") {
		t.Fatalf("output %q", out)
	}
}

func TestParseLevelAcceptsEveryDeclaredLevel(t *testing.T) {
	for _, l := range Levels {
		if _, err := ParseLevel(l); err != nil {
			t.Errorf("ParseLevel(%q): %v", l, err)
		}
	}
}

// TestLoggerMasksSecrets captures what the process logger writes, in both
// formats, for a record carrying a BMC password every way a caller could
// slip it in: message, attribute named like a secret, URL, error text,
// driver_info map, scoped With attributes.
func TestLoggerMasksSecrets(t *testing.T) {
	const pw = "Sup3rSecret"
	url := "redfish+https://admin:" + pw + "@[fe80::1]:443/redfish/v1"
	for _, format := range Formats {
		t.Run(format, func(t *testing.T) {
			var buf bytes.Buffer
			log, _, err := New(&buf, format, "debug")
			if err != nil {
				t.Fatal(err)
			}
			log = log.With("node", "n1", "address", url)
			log.Warn("power action failed: "+url, "error", errors.New(`redfish: Get "`+url+`": connection refused`),
				"redfish_password", pw, "driver_info", map[string]any{"redfish_address": url, "ipmi_password": pw},
				"cmd", "ipmitool -P x password="+pw)
			out := buf.String()
			if strings.Contains(out, pw) {
				t.Fatalf("log shows the password:\n%s", out)
			}
			if !strings.Contains(out, "redfish+https://***:***@[fe80::1]:443/redfish/v1") {
				t.Errorf("log lacks the masked URL:\n%s", out)
			}
		})
	}
}
