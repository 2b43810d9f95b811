package api

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/rivetmetal/rivet/core/internal/leakcheck"
)

// checkFuzzReply fails t when a fuzzed request is answered 5xx, or 4xx
// with a message showing Go or decoder internals (leakcheck), or without
// Ironic's error body: {"error_message": "<JSON text>"}, the inner
// document being a handler fault (faultcode "Client", a faultstring) or a
// routing error (code equal to the status, title, description).
func checkFuzzReply(t *testing.T, what string, code int, body []byte) {
	t.Helper()
	if code >= 500 {
		t.Fatalf("%s → %d %s", what, code, body)
	}
	if code < 400 {
		return
	}
	var outer map[string]json.RawMessage
	var inner string
	if err := json.Unmarshal(body, &outer); err != nil || json.Unmarshal(outer["error_message"], &inner) != nil {
		t.Fatalf("%s → %d without Ironic's error body: %s", what, code, body)
	}
	var doc struct {
		FaultCode   string `json:"faultcode"`
		FaultString string `json:"faultstring"`
		Code        int    `json:"code"`
		Title       string `json:"title"`
		Description string `json:"description"`
	}
	if err := json.Unmarshal([]byte(inner), &doc); err != nil {
		t.Fatalf("%s → %d: error_message is not a JSON document: %q", what, code, inner)
	}
	fault := doc.FaultCode == "Client" && doc.FaultString != ""
	routing := doc.Code == code && doc.Title != "" && doc.Description != ""
	if !fault && !routing {
		t.Fatalf("%s → %d: error_message is neither a client fault nor a routing error: %q", what, code, inner)
	}
	if x := leakcheck.GoInternalsBeyond(doc.FaultString+doc.Description, what); x != "" {
		t.Fatalf("%s → %d: the message shows %q: %q", what, code, x, inner)
	}
}

// fuzzEnv is shared by a fuzz target's iterations: one database, one node.
func fuzzEnv(f *testing.F) (*env, string) {
	e := newEnv(f)
	return e, e.node(map[string]any{"name": "fz", "driver_info": map[string]any{"ipmi_password": "pw"}})
}

// FuzzNodePatch asserts that no JSON-patch body makes the API answer 500.
func FuzzNodePatch(f *testing.F) {
	e, id := fuzzEnv(f)
	for _, seed := range []string{
		`[{"op":"add","path":"/extra/a","value":1}]`,
		`[{"op":"replace","path":"/driver_info/ipmi_password","value":"x"}]`,
		`[{"op":"remove","path":"/name"}]`,
		`[{"op":"add","path":"/properties/a/b/c","value":{"d":[1,2]}}]`,
		`[{"op":"replace","path":"/maintenance","value":"no"}]`,
		`[{"op":"add","path":"/","value":{}}]`,
		`[{"op":"replace","path":"/chassis_uuid","value":"x"}]`,
		`{}`, `[]`, `[1]`, `null`, `[{"op":"test","path":"/uuid"}]`,
		`[{"op":"add","path":"/extra/a~2","value":1}]`, `[{"op":"add","path":"/extra/a~","value":1}]`,
		`[{"op":5,"path":"/extra/a"}]`, `[{"op":"add","path":["/extra"],"value":1}]`, `[[1]]`, `[{"op":"remove","path":"/extra/missing"}]`,
		`[{"op":"replace","path":"/properties/0/x","value":1}]`, `[{"op":"add","path":"/extra/a/b","value":1},{"op":"add","path":"/extra/a/b/c","value":1}]`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, body string) {
		r := e.withT(t).do("PATCH", "/v1/nodes/"+id, "latest", body)
		checkFuzzReply(t, "PATCH "+body, r.Code, r.Body)
	})
}

// FuzzCreateBodies asserts that no node or port POST body answers 500.
func FuzzCreateBodies(f *testing.F) {
	e, id := fuzzEnv(f)
	for _, seed := range []string{
		`{"driver":"fake-hardware"}`, `{"driver":"fake-hardware","name":"a b"}`,
		`{"driver":"fake-hardware","chassis_uuid":"` + id + `"}`, `{"driver":["x"]}`,
		`{"address":"52:54:00:00:00:01","node_uuid":"` + id + `"}`, `{"address":1,"node_uuid":null}`,
		`{"driver":"fake-hardware","uuid":"` + id + `"}`, `{"driver":"fake-hardware","properties":[]}`,
	} {
		f.Add("/v1/nodes", seed)
		f.Add("/v1/ports", seed)
	}
	f.Fuzz(func(t *testing.T, path, body string) {
		if path != "/v1/nodes" && path != "/v1/ports" {
			path = "/v1/nodes"
		}
		r := e.withT(t).do(http.MethodPost, path, "latest", body)
		checkFuzzReply(t, "POST "+path+" "+body, r.Code, r.Body)
	})
}

// FuzzVIFAttach asserts that no VIF attach body or VIF id answers 500.
func FuzzVIFAttach(f *testing.F) {
	e, id := fuzzEnv(f)
	e.must(http.StatusCreated, "POST", "/v1/ports", "latest", map[string]any{"node_uuid": id, "address": "52:54:00:00:00:0f"})
	for _, seed := range []string{
		`{"id":"vif-1"}`, `{"id":"vif-1","tag":{"a":[1,2]}}`, `{"id":5}`, `{"id":null}`, `{"id":"a b"}`,
		`{"tag":"x"}`, `[]`, `"vif"`, `{"id":"` + id + `","port_uuid":"x"}`, `{`, ``,
	} {
		f.Add(seed, "vif-1")
	}
	f.Fuzz(func(t *testing.T, body, vif string) {
		e := e.withT(t)
		r := e.do(http.MethodPost, "/v1/nodes/"+id+"/vifs", "latest", body)
		checkFuzzReply(t, "POST vifs "+body, r.Code, r.Body)
		req := httptest.NewRequest(http.MethodDelete, "http://rivet.test/v1/nodes/"+id+"/vifs/x", nil)
		req.URL.Path = "/v1/nodes/" + id + "/vifs/" + vif
		req.URL.RawPath = ""
		req.Header.Set(HeaderVersion, "latest")
		rec := httptest.NewRecorder()
		e.h.ServeHTTP(rec, req)
		checkFuzzReply(t, "DELETE vifs/"+vif, rec.Code, rec.Body.Bytes())
	})
}

// FuzzPowerBody asserts that no PUT states/power body, at 1.26 or 1.27,
// answers 500: the target and Ironic's integer reading of timeout.
func FuzzPowerBody(f *testing.F) {
	e, id := fuzzEnv(f)
	for _, seed := range []string{
		`{"target":"soft power off"}`, `{"target":"power on","timeout":30}`, `{"target":"rebooting","timeout":"1_0"}`,
		`{"target":"power on","timeout":1e999999999}`, `{"target":"power on","timeout":-0.5}`, `{"target":"power on","timeout":[1]}`,
		`{"target":"power on","timeout":"+7"}`, `{"target":"power on","timeout":true}`, `{"timeout":null}`, `[]`,
	} {
		f.Add(seed, true)
		f.Add(seed, false)
	}
	f.Fuzz(func(t *testing.T, body string, at127 bool) {
		ver := "1.26"
		if at127 {
			ver = "1.27"
		}
		r := e.withT(t).do(http.MethodPut, "/v1/nodes/"+id+"/states/power", ver, body)
		checkFuzzReply(t, "PUT states/power "+body+" @"+ver, r.Code, r.Body)
	})
}
