package redact

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
)

type stringer string

func (s stringer) String() string { return string(s) }

type logValuer struct{ addr, pw string }

func (l logValuer) LogValue() slog.Value {
	return slog.GroupValue(slog.String("address", l.addr), slog.String("password", l.pw))
}

// TestAttr logs every shape an attribute can take through both slog
// handlers with Attr installed and checks that no secret comes out and
// that the masked forms do.
func TestAttr(t *testing.T) {
	const pw = "LogPw123"
	url := "https://admin:" + pw + "@10.0.0.1/redfish/v1"
	for name, newHandler := range map[string]func(*bytes.Buffer) slog.Handler{
		"text": func(b *bytes.Buffer) slog.Handler {
			return slog.NewTextHandler(b, &slog.HandlerOptions{ReplaceAttr: Attr})
		},
		"json": func(b *bytes.Buffer) slog.Handler {
			return slog.NewJSONHandler(b, &slog.HandlerOptions{ReplaceAttr: Attr})
		},
	} {
		t.Run(name, func(t *testing.T) {
			var buf bytes.Buffer
			log := slog.New(newHandler(&buf)).With("node", "n1", "bmc_url", url)
			log.Info("power on via "+url+" failed",
				"redfish_password", pw,
				"address", url,
				"error", fmt.Errorf("redfish: Get %q: dial tcp: refused", url),
				"stringer", stringer("cmd password="+pw),
				"driver_info", map[string]any{"redfish_address": url, "redfish_password": pw, "n": map[string]any{"token": pw}},
				"flat", map[string]string{"url": url, "auth_token": pw},
				"list", []any{url, 1},
				"strs", []string{url},
				"valuer", logValuer{url, pw},
				slog.Group("g", slog.String("ipmi_password", pw), slog.String("u", url)),
				"count", 3,
				"plain_error", errors.New("dial tcp 10.0.0.1:623: timeout"),
			)
			out := buf.String()
			if strings.Contains(out, pw) {
				t.Fatalf("the password shows:\n%s", out)
			}
			for _, want := range []string{"https://***:***@10.0.0.1/redfish/v1", Masked, "password=***", "dial tcp 10.0.0.1:623: timeout", "n1"} {
				if !strings.Contains(out, want) {
					t.Errorf("output lacks %q:\n%s", want, out)
				}
			}
		})
	}
}

func TestAttrKeepsCleanValuesAsTheyAre(t *testing.T) {
	err := errors.New("plain")
	a := Attr(nil, slog.Any("error", err))
	if a.Value.Any() != err {
		t.Errorf("a clean error became %#v", a.Value.Any())
	}
	tm := slog.Attr{Key: slog.TimeKey, Value: slog.StringValue("http://u:p@h")}
	if Attr(nil, tm).Value.String() != "http://u:p@h" {
		t.Error("the time attribute was rewritten")
	}
}
