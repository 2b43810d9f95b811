package api

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/rivetmetal/rivet/core/objects"
	"github.com/uptrace/bun"
)

func ptrTo(s string) *string { return &s }

// urlSecrets are the passwords TestResponsesNeverShowURLCredentials puts
// in URLs, secret-named keys and texts; none may appear in any answer.
var urlSecrets = []string{"BmcUrlPw", "MirrorPw", "ExtraPw", "NestedPw", "FtpPw", "PropPw", "LastErrPw",
	"ReasonPw", "PortPw", "PortUrlPw", "ChassisPw", "PgPw", "QueryTok"}

// TestResponsesNeverShowURLCredentials stores every shape of credential
// a node, port, portgroup and chassis can carry outside driver_info's
// password keys (URL userinfo in any document, secret-named keys in extra
// and properties at any depth, URLs in last_error) and reads them back
// through every view: detail, one node, fields= (the list's fast path
// too), states, PATCH answers. Masking is on the way out: the stored
// values stay intact, also after a PATCH of a neighbouring key.
func TestResponsesNeverShowURLCredentials(t *testing.T) {
	e := newEnv(t)
	var bodies [][]byte
	do := func(code int, method, path, ver string, body any) resp {
		t.Helper()
		r := e.must(code, method, path, ver, body)
		bodies = append(bodies, r.Body)
		return r
	}
	n := do(http.StatusCreated, "POST", "/v1/nodes", "latest", map[string]any{"driver": "fake-hardware", "name": "n1",
		"driver_info": map[string]any{"redfish_address": "https://admin:BmcUrlPw@bmc.example/redfish/v1", "redfish_username": "admin"},
		"instance_info": map[string]any{"image_source": "https://mirror:MirrorPw@mirror.example/img.qcow2?token=QueryTok",
			"root_gb": "10"},
		"extra": map[string]any{"password": "ExtraPw", "owner": "ops", "notes": "ftp://u:FtpPw@[fe80::1]:21/x",
			"nested": map[string]any{"deep": []any{map[string]any{"client_secret": "NestedPw"}}}},
		"properties": map[string]any{"cpu_arch": "x86_64", "bmc_api_token": "PropPw"},
	}).JSON(t)
	id := n["uuid"].(string)
	if got := n["driver_info"].(map[string]any)["redfish_address"]; got != "https://***:***@bmc.example/redfish/v1" {
		t.Errorf("POST answer driver_info.redfish_address = %v", got)
	}

	stored, err := e.store.GetNode(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	stored.LastError = ptrTo(`redfish: Get "https://admin:LastErrPw@10.0.0.1/redfish/v1": dial tcp 10.0.0.1:443: connect: connection refused`)
	stored.MaintenanceReason = ptrTo("BMC at http://root:ReasonPw@10.0.0.2 unreachable")
	if err := e.store.Save(t.Context(), stored); err != nil {
		t.Fatal(err)
	}
	do(http.StatusCreated, "POST", "/v1/ports", "latest", map[string]any{"node_uuid": id, "address": "52:54:00:12:34:56",
		"extra": map[string]any{"password": "PortPw", "switch": "https://sw:PortUrlPw@switch.example"}})
	pg := do(http.StatusCreated, "POST", "/v1/portgroups", "latest", map[string]any{"node_uuid": id, "name": "pg1",
		"extra": map[string]any{"secret": "PgPw"}}).JSON(t)["uuid"].(string)
	ch := do(http.StatusCreated, "POST", "/v1/chassis", "latest", map[string]any{
		"description": "rack http://a:ChassisPw@pdu", "extra": map[string]any{"pdu_password": "ChassisPw"}}).JSON(t)["uuid"].(string)

	one := do(http.StatusOK, "GET", "/v1/nodes/"+id, "latest", nil).JSON(t)
	for field, want := range map[string]string{
		"last_error":         `redfish: Get "https://***:***@10.0.0.1/redfish/v1": dial tcp 10.0.0.1:443: connect: connection refused`,
		"maintenance_reason": "BMC at http://***:***@10.0.0.2 unreachable",
	} {
		if one[field] != want {
			t.Errorf("%s = %q, want %q", field, one[field], want)
		}
	}
	if ex := one["extra"].(map[string]any); ex["password"] != Masked || ex["owner"] != "ops" || ex["notes"] != "ftp://***:***@[fe80::1]:21/x" {
		t.Errorf("extra = %v", ex)
	}
	if ii := one["instance_info"].(map[string]any); ii["image_source"] != "https://***:***@mirror.example/img.qcow2?token=***" {
		t.Errorf("instance_info = %v", ii)
	}
	if pr := one["properties"].(map[string]any); pr["bmc_api_token"] != Masked || pr["cpu_arch"] != "x86_64" {
		t.Errorf("properties = %v", pr)
	}

	patched := do(http.StatusOK, "PATCH", "/v1/nodes/"+id, "latest", []map[string]any{
		{"op": "add", "path": "/extra/other", "value": "x"},
		{"op": "add", "path": "/properties/memory_mb", "value": 1024},
		{"op": "replace", "path": "/instance_info/root_gb", "value": "20"},
	}).JSON(t)
	if patched["extra"].(map[string]any)["password"] != Masked {
		t.Errorf("PATCH answer extra = %v", patched["extra"])
	}
	for _, path := range []string{
		"/v1/nodes/detail", "/v1/nodes/n1", "/v1/nodes?fields=driver_info", "/v1/nodes?fields=last_error",
		"/v1/nodes?fields=last_error,maintenance_reason,name", "/v1/nodes?fields=extra,instance_info,properties",
		"/v1/nodes/n1?fields=driver_info,extra,instance_info,last_error", "/v1/nodes/n1/states",
		"/v1/ports/detail", "/v1/nodes/n1/ports/detail", "/v1/portgroups/detail", "/v1/portgroups/" + pg,
		"/v1/chassis/detail", "/v1/chassis/" + ch,
	} {
		do(http.StatusOK, "GET", path, "latest", nil)
	}
	if lst := do(http.StatusOK, "GET", "/v1/nodes?fields=last_error", "latest", nil).JSON(t)["nodes"].([]any); len(lst) != 1 ||
		!strings.Contains(lst[0].(map[string]any)["last_error"].(string), "https://***:***@10.0.0.1") {
		t.Errorf("fields=last_error: %v", lst)
	}
	for i, b := range bodies {
		for _, s := range urlSecrets {
			if bytes.Contains(b, []byte(s)) {
				t.Errorf("response %d shows %q: %s", i, s, b)
			}
		}
	}

	// Stored values are the real ones, after the PATCH too.
	after, err := e.store.GetNode(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	if after.Extra["password"] != "ExtraPw" || after.Extra["other"] != "x" ||
		after.Extra["nested"].(map[string]any)["deep"].([]any)[0].(map[string]any)["client_secret"] != "NestedPw" ||
		after.Properties["bmc_api_token"] != "PropPw" || after.InstanceInfo["root_gb"] != "20" ||
		after.InstanceInfo["image_source"] != "https://mirror:MirrorPw@mirror.example/img.qcow2?token=QueryTok" ||
		after.DriverInfo["redfish_address"] != "https://admin:BmcUrlPw@bmc.example/redfish/v1" {
		t.Errorf("stored node changed: extra %v properties %v instance_info %v driver_info %v",
			after.Extra, after.Properties, after.InstanceInfo, after.DriverInfo)
	}
}

// TestPatchOtherResourcesKeepsSecrets: a PATCH of a port, portgroup or
// chassis applies to the stored document, not the masked one.
func TestPatchOtherResourcesKeepsSecrets(t *testing.T) {
	e := newEnv(t)
	id := e.node(nil)
	port := e.must(http.StatusCreated, "POST", "/v1/ports", "latest", map[string]any{"node_uuid": id, "address": "52:54:00:12:34:57",
		"extra": map[string]any{"password": "PortPw"}}).JSON(t)["uuid"].(string)
	pg := e.must(http.StatusCreated, "POST", "/v1/portgroups", "latest", map[string]any{"node_uuid": id,
		"extra": map[string]any{"secret": "PgPw"}}).JSON(t)["uuid"].(string)
	ch := e.must(http.StatusCreated, "POST", "/v1/chassis", "latest", map[string]any{
		"extra": map[string]any{"pdu_password": "ChassisPw"}}).JSON(t)["uuid"].(string)
	for _, path := range []string{"/v1/ports/" + port, "/v1/portgroups/" + pg, "/v1/chassis/" + ch} {
		r := e.must(http.StatusOK, "PATCH", path, "latest", []map[string]any{{"op": "add", "path": "/extra/x", "value": "y"}})
		if bytesContains(r.Body, "Pw") {
			t.Errorf("PATCH %s answer shows a secret: %s", path, r.Body)
		}
	}
	for path, want := range map[string][2]string{
		"/v1/ports/" + port: {"password", "PortPw"}, "/v1/portgroups/" + pg: {"secret", "PgPw"}, "/v1/chassis/" + ch: {"pdu_password", "ChassisPw"},
	} {
		r := e.must(http.StatusOK, "GET", path, "latest", nil).JSON(t)
		if ex := r["extra"].(map[string]any); ex[want[0]] != Masked || ex["x"] != "y" {
			t.Errorf("%s extra = %v", path, ex)
		}
	}
	obj, err := e.store.Load(t.Context(), "Port", func(q *bun.SelectQuery) *bun.SelectQuery {
		return q.Where("?TableAlias.uuid = ?", port)
	})
	if err != nil {
		t.Fatal(err)
	}
	if p := obj.(*objects.Port); p.Extra["password"] != "PortPw" || p.Extra["x"] != "y" {
		t.Errorf("stored port extra = %v", p.Extra)
	}
}

func TestFaultMasksCredentials(t *testing.T) {
	rec := httptest.NewRecorder()
	WriteFault(rec, http.StatusBadRequest, `node n1: redfish: Get "https://admin:FaultPw@10.0.0.1/redfish/v1": dial tcp: refused; password=FaultPw2`)
	got := resp{Body: rec.Body.Bytes()}.Fault(t)
	want := `node n1: redfish: Get "https://***:***@10.0.0.1/redfish/v1": dial tcp: refused; password=***`
	if got != want {
		t.Errorf("faultstring %q, want %q", got, want)
	}
	rec = httptest.NewRecorder()
	writeRoutingError(rec, http.StatusNotAcceptable, "see http://u:RoutePw@h")
	if bytesContains(rec.Body.Bytes(), "RoutePw") {
		t.Errorf("routing error shows the password: %s", rec.Body)
	}
}
