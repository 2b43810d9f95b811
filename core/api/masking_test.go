package api

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestMaskDict(t *testing.T) {
	tests := map[string]struct {
		in, want map[string]any
	}{
		"ipmi": {
			in:   map[string]any{"ipmi_password": "x", "ipmi_username": "admin", "ipmi_address": "1.2.3.4"},
			want: map[string]any{"ipmi_password": Masked, "ipmi_username": "admin", "ipmi_address": "1.2.3.4"},
		},
		"case and substrings": {
			in:   map[string]any{"Redfish_PASSWORD": "x", "my_secret_thing": "x", "auth_token": "x", "ssh_private_key": "x", "key": "kept"},
			want: map[string]any{"Redfish_PASSWORD": Masked, "my_secret_thing": Masked, "auth_token": Masked, "ssh_private_key": Masked, "key": "kept"},
		},
		"snmp keys masked explicitly": {
			in:   map[string]any{"snmp_auth_key": "x", "snmp_priv_key": "x", "snmp_version": "3"},
			want: map[string]any{"snmp_auth_key": Masked, "snmp_priv_key": Masked, "snmp_version": "3"},
		},
		"nested and lists": {
			in:   map[string]any{"a": map[string]any{"b": map[string]any{"password": "x"}}, "l": []any{map[string]any{"token": "x"}, "plain"}},
			want: map[string]any{"a": map[string]any{"b": map[string]any{"password": Masked}}, "l": []any{map[string]any{"token": Masked}, "plain"}},
		},
		"nil": {in: nil, want: map[string]any{}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if d := cmp.Diff(tc.want, maskDict(tc.in)); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
	ii := maskInstanceInfo(map[string]any{"image_url": "http://x", "configdrive": "abc", "root_gb": "10", "image_source": "glance://x"})
	if d := cmp.Diff(map[string]any{"image_url": Masked, "configdrive": Masked, "root_gb": "10", "image_source": "glance://x"}, ii); d != "" {
		t.Errorf("instance_info (-want +got):\n%s", d)
	}
}

func TestDriverInternalInfoMasked(t *testing.T) {
	e := newEnv(t)
	id := e.node(nil)
	n, err := e.store.GetNode(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	n.DriverInternalInfo = map[string]any{"agent_secret_token": "s3", "agent_url": "http://a"}
	if err := e.store.Save(t.Context(), n); err != nil {
		t.Fatal(err)
	}
	got := e.must(http.StatusOK, "GET", "/v1/nodes/"+id, "1.3", nil).JSON(t)["driver_internal_info"].(map[string]any)
	if got["agent_secret_token"] != Masked || got["agent_url"] != "http://a" {
		t.Errorf("driver_internal_info = %v", got)
	}
}

// TestChunkedBodyTooLarge: a body without Content-Length that outgrows the
// limit is cut at the limit and answered 413.
func TestChunkedBodyTooLarge(t *testing.T) {
	e := newEnv(t, func(d *Deps) { d.MaxBodyBytes = 1024 })
	req := httptest.NewRequest("POST", "/v1/nodes", strings.NewReader(`{"driver":"`+strings.Repeat("y", 4096)+`"}`))
	req.ContentLength = -1
	rec := httptest.NewRecorder()
	e.h.ServeHTTP(rec, req)
	if rec.Code != http.StatusRequestEntityTooLarge {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	if got := (resp{Body: rec.Body.Bytes()}).Fault(t); got != "Request is too large." {
		t.Errorf("fault %q", got)
	}
}
