package api

import (
	"net/http"
	"testing"

	"github.com/rivetmetal/rivet/core/release"
	"github.com/rivetmetal/rivet/core/rpc"
	"github.com/rivetmetal/rivet/core/version"
)

// heartbeatEnv is an agentEnv serving up to 1.72 with the node waiting
// for its agent and the token lookup issued.
func heartbeatEnv(t *testing.T) (*env, string, string) {
	t.Helper()
	e, id, _ := agentEnv(t, "wait call-back", withMaxAPI("1.72"))
	token := e.must(http.StatusOK, "GET", "/v1/lookup?node_uuid="+id, "1.72", nil).JSON(t)["config"].(map[string]any)["agent_token"].(string)
	return e, id, token
}

// hb is a heartbeat body with the token and extra fields.
func hb(token string, extra ...string) map[string]any {
	b := map[string]any{"callback_url": "http://10.0.0.5:9999", "agent_token": token}
	for i := 0; i+1 < len(extra); i += 2 {
		b[extra[i]] = extra[i+1]
	}
	return b
}

// 1.36: agent_version in a heartbeat. Below, Ironic's
// InvalidParameterValue (400, its message) and nothing reaches the
// conductor; at 1.36 the version is passed on.
func TestV1_36HeartbeatAgentVersion(t *testing.T) {
	e, id, token := heartbeatEnv(t)
	if got := e.must(http.StatusBadRequest, "POST", "/v1/heartbeat/"+id, "1.35", hb(token, "agent_version", "9.14.1")).Fault(t); got != `Field "agent_version" not recognised` {
		t.Errorf("1.35: %q", got)
	}
	if e.cond.heartbeat.agentVersion != "" {
		t.Errorf("refused heartbeat reached the conductor")
	}
	// An empty agent_version is no version: Ironic lets it through.
	e.must(http.StatusAccepted, "POST", "/v1/heartbeat/"+id, "1.35", hb(token, "agent_version", ""))
	e.must(http.StatusAccepted, "POST", "/v1/heartbeat/"+id, "1.36", hb(token, "agent_version", "9.14.1"))
	if e.cond.heartbeat.agentVersion != "9.14.1" {
		t.Errorf("agent_version passed on: %q", e.cond.heartbeat.agentVersion)
	}
}

// 1.62: agent_token. Ironic issues the token at lookup from 1.62 on; Rivet
// issues it at every version it serves (its heartbeat requires a token at
// every version, and an agent talking to a Rivet that serves less than
// 1.62 must still be able to heartbeat): 1.61 and 1.62 answer alike, with
// agent_token_required.
func TestV1_62AgentToken(t *testing.T) {
	for _, ver := range []string{"1.61", "1.62"} {
		e, id, _ := agentEnv(t, "wait call-back", withMaxAPI("1.72"))
		cfg := e.must(http.StatusOK, "GET", "/v1/lookup?node_uuid="+id, ver, nil).JSON(t)["config"].(map[string]any)
		token, _ := cfg["agent_token"].(string)
		if len(token) != 43 || cfg["agent_token_required"] != true {
			t.Fatalf("%s: lookup config %v", ver, cfg)
		}
		e.must(http.StatusAccepted, "POST", "/v1/heartbeat/"+id, ver, hb(token))
	}
}

// 1.68: agent_verify_ca. Below, 400 with Ironic's message; at 1.68 the
// certificate is passed on to the conductor.
func TestV1_68HeartbeatVerifyCA(t *testing.T) {
	e, id, token := heartbeatEnv(t)
	const ca = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"
	if got := e.must(http.StatusBadRequest, "POST", "/v1/heartbeat/"+id, "1.67", hb(token, "agent_verify_ca", ca)).Fault(t); got != `Field "agent_verify_ca" not recognised in this version` {
		t.Errorf("1.67: %q", got)
	}
	e.must(http.StatusAccepted, "POST", "/v1/heartbeat/"+id, "1.68", hb(token, "agent_verify_ca", ca))
	if e.cond.heartbeat.extra.VerifyCA != ca {
		t.Errorf("agent_verify_ca passed on: %q", e.cond.heartbeat.extra.VerifyCA)
	}
}

// 1.72: agent_status and agent_status_message. Below, 400 with Ironic's
// message; at 1.72 a status outside start/end/error is 400 too.
func TestV1_72HeartbeatStatus(t *testing.T) {
	e, id, token := heartbeatEnv(t)
	for _, f := range []string{"agent_status", "agent_status_message"} {
		if got := e.must(http.StatusBadRequest, "POST", "/v1/heartbeat/"+id, "1.71", hb(token, f, "end")).Fault(t); got != `Fields "agent_status" and "agent_status_message" not recognised.` {
			t.Errorf("1.71 %s: %q", f, got)
		}
	}
	if got := e.must(http.StatusBadRequest, "POST", "/v1/heartbeat/"+id, "1.72", hb(token, "agent_status", "done")).Fault(t); got != "Agent status is invalid. Valid states are start,end,error." {
		t.Errorf("bad status: %q", got)
	}
	e.must(http.StatusAccepted, "POST", "/v1/heartbeat/"+id, "1.72", hb(token, "agent_status", "end", "agent_status_message", "installed"))
	if got := e.cond.heartbeat.extra; got != (rpc.HeartbeatExtra{Status: "end", StatusMessage: "installed"}) {
		t.Errorf("status passed on: %+v", got)
	}
}

// callback_url must be an http(s) URL, and the one the agent announced
// first (Ironic's checks).
func TestHeartbeatCallbackURL(t *testing.T) {
	e, id, token := heartbeatEnv(t)
	body := hb(token)
	body["callback_url"] = "ftp://10.0.0.5"
	if got := e.must(http.StatusBadRequest, "POST", "/v1/heartbeat/"+id, "1.72", body).Fault(t); got != `An issue with the supplied "callback_url" has been detected.` {
		t.Errorf("ftp: %q", got)
	}
	n, _ := e.store.GetNode(t.Context(), id)
	n.DriverInternalInfo["agent_url"] = "http://10.0.0.9:9999"
	if err := e.store.Save(t.Context(), n); err != nil {
		t.Fatal(err)
	}
	if got := e.must(http.StatusBadRequest, "POST", "/v1/heartbeat/"+id, "1.72", hb(token)).Fault(t); got != `Detected change in ramdisk provided "callback_url"` {
		t.Errorf("changed URL: %q", got)
	}
}

// Pinned to release 0.2 (API 1.31, RPC 1.4), the versions that send the
// RPC 1.5 heartbeat fields are not served: 406, nothing sent.
func TestHeartbeatFieldsPinnedTo02(t *testing.T) {
	v := version.MustParse
	objs := map[string][]version.Version{"Chassis": {v("1.0")}, "Conductor": {v("1.0")}, "Node": {v("1.1"), v("1.0")}, "Port": {v("1.0")}, "Portgroup": {v("1.0")}}
	old := release.Entry{Version: "0.2", Name: "bellows", API: v("1.31"), RPC: v("1.4"), Objects: objs, ServiceVersion: 2}
	table, err := release.NewTable(release.Default().Head(), old)
	if err != nil {
		t.Fatal(err)
	}
	pin, err := table.ParsePin("0.2")
	if err != nil {
		t.Fatal(err)
	}
	e := newEnvPinned(t, release.NewPinner(table, pin), withMaxAPI("1.72"))
	id := e.node(nil)
	for _, ver := range []string{"1.68", "1.72"} {
		r := e.must(http.StatusNotAcceptable, "POST", "/v1/heartbeat/"+id, ver, hb("t", "agent_verify_ca", "x"))
		if r.Header.Get(HeaderMaxVersion) != "1.31" {
			t.Errorf("%s: max header %q", ver, r.Header.Get(HeaderMaxVersion))
		}
	}
	for _, c := range e.cond.calls {
		if c == "heartbeat http://10.0.0.5:9999" {
			t.Error("a heartbeat reached the conductor")
		}
	}
}
