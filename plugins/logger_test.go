package plugins

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// TestLoggerWritesHCLogJSON checks NewLogger's lines are what go-plugin's
// host parses as hclog JSON (@message, @level, @timestamp), at hclog's level
// names, with secrets masked.
func TestLoggerWritesHCLogJSON(t *testing.T) {
	tests := map[string]struct {
		level slog.Level
		want  string
	}{
		"debug": {slog.LevelDebug, "debug"},
		"info":  {slog.LevelInfo, "info"},
		"warn":  {slog.LevelWarn, "warn"},
		"error": {slog.LevelError, "error"},
		"trace": {slog.LevelDebug - 4, "trace"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var buf bytes.Buffer
			newLogger(&buf, slog.LevelDebug-4).Log(t.Context(), tc.level, "set power", "node", "n1", "redfish_password", "s3cret")
			var line map[string]any
			if err := json.Unmarshal(buf.Bytes(), &line); err != nil {
				t.Fatalf("not JSON: %q", buf.String())
			}
			if line["@message"] != "set power" || line["@level"] != tc.want || line["node"] != "n1" {
				t.Errorf("line %v", line)
			}
			if _, err := time.Parse("2006-01-02T15:04:05.000000Z07:00", line["@timestamp"].(string)); err != nil {
				t.Errorf("timestamp: %v", err)
			}
			if strings.Contains(buf.String(), "s3cret") {
				t.Errorf("secret logged: %s", buf.String())
			}
		})
	}
}

// TestLoggerMasksURLCredentials: a driver logging a BMC URL with
// credentials, in the message, a value or an error, logs it masked.
func TestLoggerMasksURLCredentials(t *testing.T) {
	var buf bytes.Buffer
	url := "https://admin:UrlPw99@10.0.0.1/redfish/v1"
	newLogger(&buf, slog.LevelInfo).Info("GET "+url, "address", url,
		"error", errors.New(`Get "`+url+`": refused`), "driver_info", DriverInfo{"redfish_address": url})
	if out := buf.String(); strings.Contains(out, "UrlPw99") || strings.Contains(out, "admin:") ||
		!strings.Contains(out, "https://***:***@10.0.0.1/redfish/v1") {
		t.Errorf("line %s", out)
	}
}
