package api

import (
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/rivetmetal/rivet/core/agenttoken"
	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/core/rpc"
	"github.com/rivetmetal/rivet/core/states"
	"github.com/rivetmetal/rivet/core/version"
	"github.com/uptrace/bun"
)

// ramdiskHeartbeatTimeout is Ironic's [api] ramdisk_heartbeat_timeout.
const ramdiskHeartbeatTimeout = 300

// ramdiskAllowed answers 404 below 1.22, as Ironic for a newer resource.
func ramdiskAllowed(r *http.Request) error {
	if VersionFrom(r.Context()).Less(v1_22) {
		return errorf(http.StatusNotFound, msgNotFound)
	}
	return nil
}

// lookup serves GET /v1/lookup?addresses=…&node_uuid=… (1.22) for ramdisk
// agents: the node (uuid, properties, instance_info, driver_internal_info,
// links; masked) and the agent's configuration. Only a node in a state
// that expects an agent is found (404 otherwise, the same answer as for no
// node, as Ironic's restrict_lookup). The first lookup of such a node has
// its conductor issue the agent token (get_node_with_token) and answers it
// in config.agent_token; later ones answer "******" until the token is
// wiped. Unlike Ironic, which issues tokens from 1.62 only, Rivet issues
// them at every version it serves: its heartbeat requires one at every
// version.
func (s *server) lookup(w http.ResponseWriter, r *http.Request) error {
	if err := ramdiskAllowed(r); err != nil {
		return err
	}
	q := r.URL.Query()
	nodeUUID := q.Get("node_uuid")
	var macs []string
	for _, a := range strings.Split(q.Get("addresses"), ",") {
		if mac, ok := normalizeMAC(strings.TrimSpace(a)); ok {
			macs = append(macs, mac)
		}
	}
	if nodeUUID == "" && len(macs) == 0 {
		return errorf(http.StatusBadRequest, "At least one of 'addresses' and 'node_uuid' parameters is required")
	}
	var n *objects.Node
	switch {
	case nodeUUID != "":
		obj, err := s.byUUID(r.Context(), "Node", nodeUUID, func(string) error { return errorf(http.StatusNotFound, msgNotFound) })
		if err != nil {
			return err
		}
		n = obj.(*objects.Node)
	default:
		ports, err := s.Store.LoadAll(r.Context(), "Port", func(q *bun.SelectQuery) *bun.SelectQuery { return q.Where("?TableAlias.address IN (?)", bun.In(macs)) })
		if err != nil {
			return err
		}
		for _, p := range ports {
			node, err := s.nodeByID(r.Context(), p.(*objects.Port).NodeID)
			if err != nil {
				return err
			}
			if n != nil && n.ID != node.ID {
				return errorf(http.StatusNotFound, msgNotFound) // addresses of several nodes
			}
			n = node
		}
		if n == nil {
			return errorf(http.StatusNotFound, msgNotFound)
		}
	}
	if !states.ExpectsAgent(states.State(n.ProvisionState)) {
		return errorf(http.StatusNotFound, msgNotFound)
	}
	var token any // null: none issued
	if agenttoken.Present(n.DriverInternalInfo) {
		// Issued before: answered masked, without taking the node's lease
		// (a flood of lookups must not lock the node).
		return s.writeLookup(w, r, n, agenttoken.Masked)
	}
	switch withToken, err := s.Conductor.GetNodeWithToken(r.Context(), n); {
	case errors.As(err, new(*rpc.CapError)):
		// Conductors pinned below RPC 1.4 cannot issue tokens: the agent
		// gets none, and its heartbeats are refused until the pin lifts.
		s.Logger.WarnContext(r.Context(), "agent token not issued: the conductor RPC API is pinned below 1.4; heartbeats of this node's agent will be refused",
			slog.String("node", n.UUID))
	case err != nil:
		return err
	case !states.ExpectsAgent(states.State(withToken.ProvisionState)):
		return errorf(http.StatusNotFound, msgNotFound) // it moved on meanwhile
	default:
		n = withToken
		if t := agenttoken.Stored(n.DriverInternalInfo); t != "" {
			token = t
		}
	}
	return s.writeLookup(w, r, n, token)
}

// writeLookup answers a lookup: n's fields (masked) and the agent's
// configuration with token (a string, or nil for none).
func (s *server) writeLookup(w http.ResponseWriter, r *http.Request, n *objects.Node, token any) error {
	writeJSON(w, http.StatusOK, lookupBody(r, n, token))
	return nil
}

// lookupBody is a lookup answer (Ironic's ramdisk convert_with_links): n's
// fields (masked) and the agent's configuration with token.
func lookupBody(r *http.Request, n *objects.Node, token any) map[string]any {
	return map[string]any{
		"node": map[string]any{
			"uuid": n.UUID, "properties": maskDict(n.Properties), "instance_info": maskInstanceInfo(n.InstanceInfo),
			"driver_internal_info": maskDict(n.DriverInternalInfo), "links": resourceLinks(r, "nodes", n.UUID),
		},
		"config": map[string]any{
			"heartbeat_timeout": ramdiskHeartbeatTimeout,
			"metrics": map[string]any{"backend": "noop", "prepend_host": false, "prepend_uuid": false,
				"prepend_host_reverse": true, "global_prefix": nil},
			"metrics_statsd": map[string]any{"statsd_host": "localhost", "statsd_port": 8125},
			"agent_token":    token,
			// As Ironic since Victoria: agents must present the token.
			"agent_token_required": true,
		},
	}
}

// Microversions of the heartbeat's optional fields (named here, not in
// router.go's table, so that branches adding versions do not collide).
var (
	verHeartbeatAgentVersion = version.Version{Major: 1, Minor: 36} // agent_version
	verHeartbeatVerifyCA     = version.Version{Major: 1, Minor: 68} // agent_verify_ca
	verHeartbeatStatus       = version.Version{Major: 1, Minor: 72} // agent_status, agent_status_message
)

// agentStatuses are the agent_status values Ironic accepts (1.72).
var agentStatuses = []string{"start", "end", "error"}

// heartbeat serves POST /v1/heartbeat/{node} {"callback_url",
// "agent_token", "agent_version" (1.36), "agent_verify_ca" (1.68),
// "agent_status", "agent_status_message" (1.72)} (1.22): passed to the
// node's conductor, 202. A field newer than the request's version is
// Ironic's InvalidParameterValue (400, its message), checked first.
// callback_url must be an http(s) URL (or "", which Ironic lets one-way
// agents send) and, once the node has an agent_url, the same one (400
// otherwise: another agent answers for the node). The token lookup issued
// is required at every version, as Ironic requires it: missing, 400 "Agent
// token is required for heartbeat processing."; not the node's, 400
// "Invalid or missing agent token received." (Ironic's
// InvalidParameterValue, not 401); either way nothing changes and nothing
// reaches the conductor. The conductor is sent the token's digest and
// checks it again under the node's lease.
func (s *server) heartbeat(w http.ResponseWriter, r *http.Request) error {
	if err := ramdiskAllowed(r); err != nil {
		return err
	}
	n, err := s.getNodeByIdent(r, r.PathValue("node"))
	if err != nil {
		return err
	}
	body, err := readObject(r)
	if err != nil {
		return err
	}
	if err := body.only("heartbeat", "callback_url", "agent_token", "agent_version", "agent_verify_ca",
		"agent_status", "agent_status_message"); err != nil {
		return err
	}
	fields := map[string]*string{}
	for _, f := range []string{"callback_url", "agent_token", "agent_version", "agent_verify_ca", "agent_status", "agent_status_message"} {
		v, _, err := body.str(f, f != "callback_url")
		if err != nil {
			return err
		}
		fields[f] = v
	}
	set := func(f string) bool { return fields[f] != nil && *fields[f] != "" }
	ver := VersionFrom(r.Context())
	if set("agent_version") && ver.Less(verHeartbeatAgentVersion) {
		return errorf(http.StatusBadRequest, `Field "agent_version" not recognised`)
	}
	if (set("agent_status") || set("agent_status_message")) && ver.Less(verHeartbeatStatus) {
		return errorf(http.StatusBadRequest, `Fields "agent_status" and "agent_status_message" not recognised.`)
	}
	if fields["agent_verify_ca"] != nil && ver.Less(verHeartbeatVerifyCA) {
		return errorf(http.StatusBadRequest, `Field "agent_verify_ca" not recognised in this version`)
	}
	cb := fields["callback_url"]
	if cb == nil {
		return errorf(http.StatusBadRequest, "Invalid input for field/attribute callback_url. Value: 'None'. Mandatory field missing.")
	}
	if u, err := url.Parse(*cb); *cb != "" && (err != nil || !strings.Contains(u.Scheme, "http")) {
		return errorf(http.StatusBadRequest, `An issue with the supplied "callback_url" has been detected.`)
	}
	if known, ok := n.DriverInternalInfo["agent_url"].(string); ok && known != *cb {
		s.Logger.WarnContext(r.Context(), "agent heartbeat refused: callback URL differs from the agent's", slog.String("node", n.UUID),
			slog.String("client", clientIP(r, &s.Links)))
		return errorf(http.StatusBadRequest, `Detected change in ramdisk provided "callback_url"`)
	}
	token := fields["agent_token"]
	if token == nil {
		s.Logger.WarnContext(r.Context(), "agent heartbeat refused: no agent token", slog.String("node", n.UUID), slog.String("client", clientIP(r, &s.Links)))
		return errorf(http.StatusBadRequest, "Agent token is required for heartbeat processing.")
	}
	if st := fields["agent_status"]; st != nil && !slices.Contains(agentStatuses, *st) {
		return errorf(http.StatusBadRequest, "Agent status is invalid. Valid states are %s.", strings.Join(agentStatuses, ","))
	}
	if !agenttoken.Valid(n.DriverInternalInfo, *token) {
		// The node and the client only: never the token presented.
		s.Logger.WarnContext(r.Context(), "agent heartbeat refused: invalid agent token", slog.String("node", n.UUID), slog.String("client", clientIP(r, &s.Links)))
		return errorf(http.StatusBadRequest, "Invalid or missing agent token received.")
	}
	str := func(f string) string {
		if p := fields[f]; p != nil {
			return *p
		}
		return ""
	}
	extra := rpc.HeartbeatExtra{VerifyCA: str("agent_verify_ca"), Status: str("agent_status"), StatusMessage: str("agent_status_message")}
	if err := s.Conductor.Heartbeat(r.Context(), n, *cb, str("agent_version"), agenttoken.Digest(*token), extra); err != nil {
		return err
	}
	w.WriteHeader(http.StatusAccepted)
	return nil
}
