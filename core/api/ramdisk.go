package api

import (
	"errors"
	"log/slog"
	"net/http"
	"strings"

	"github.com/rivetmetal/rivet/core/agenttoken"
	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/core/rpc"
	"github.com/rivetmetal/rivet/core/states"
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

// heartbeat serves POST /v1/heartbeat/{node} {"callback_url",
// "agent_token"} (1.22): passed to the node's conductor, 202.
// agent_version is 1.36 (406). The token lookup issued is required at
// every version, as Ironic requires it: missing, 400 "Agent token is
// required for heartbeat processing."; not the node's, 400 "Invalid or
// missing agent token received." (Ironic's InvalidParameterValue, not
// 401); either way nothing changes and nothing reaches the conductor. The
// conductor is sent the token's digest and checks it again under the
// node's lease.
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
	if _, ok := body["agent_version"]; ok {
		return errNotAcceptable()
	}
	if err := body.only("heartbeat", "callback_url", "agent_token"); err != nil {
		return err
	}
	cb, _, err := body.str("callback_url", false)
	if err != nil {
		return err
	}
	if cb == nil {
		return errorf(http.StatusBadRequest, "Invalid input for field/attribute callback_url. Value: 'None'. Mandatory field missing.")
	}
	token, _, err := body.str("agent_token", false)
	if err != nil {
		return err
	}
	if token == nil {
		s.Logger.WarnContext(r.Context(), "agent heartbeat refused: no agent token", slog.String("node", n.UUID), slog.String("client", clientIP(r, &s.Links)))
		return errorf(http.StatusBadRequest, "Agent token is required for heartbeat processing.")
	}
	if !agenttoken.Valid(n.DriverInternalInfo, *token) {
		// The node and the client only: never the token presented.
		s.Logger.WarnContext(r.Context(), "agent heartbeat refused: invalid agent token", slog.String("node", n.UUID), slog.String("client", clientIP(r, &s.Links)))
		return errorf(http.StatusBadRequest, "Invalid or missing agent token received.")
	}
	if err := s.Conductor.Heartbeat(r.Context(), n, *cb, "", agenttoken.Digest(*token)); err != nil {
		return err
	}
	w.WriteHeader(http.StatusAccepted)
	return nil
}
