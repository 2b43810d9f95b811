package api

import (
	"net/http"
	"strings"

	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/core/states"
	"github.com/uptrace/bun"
)

// lookupStates are where a ramdisk agent may look its node up (Ironic's
// restrict_lookup, on by default).
var lookupStates = map[states.State]bool{
	states.Deploying: true, states.DeployWait: true, states.Cleaning: true, states.CleanWait: true,
	states.Inspecting: true, states.InspectWait: true,
}

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
// links; masked) and the agent's configuration.
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
	if !lookupStates[states.State(n.ProvisionState)] {
		return errorf(http.StatusNotFound, msgNotFound)
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"node": map[string]any{
			"uuid": n.UUID, "properties": maskDict(n.Properties), "instance_info": maskInstanceInfo(n.InstanceInfo),
			"driver_internal_info": maskDict(n.DriverInternalInfo), "links": resourceLinks(r, "nodes", n.UUID),
		},
		"config": map[string]any{
			"heartbeat_timeout": ramdiskHeartbeatTimeout,
			"metrics": map[string]any{"backend": "noop", "prepend_host": false, "prepend_uuid": false,
				"prepend_host_reverse": true, "global_prefix": nil},
			"metrics_statsd": map[string]any{"statsd_host": "localhost", "statsd_port": 8125},
		},
	})
	return nil
}

// heartbeat serves POST /v1/heartbeat/{node} {"callback_url"} (1.22):
// passed to the node's conductor, 202. agent_version is 1.36 (406).
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
	if err := body.only("heartbeat", "callback_url"); err != nil {
		return err
	}
	cb, _, err := body.str("callback_url", false)
	if err != nil {
		return err
	}
	if cb == nil {
		return errorf(http.StatusBadRequest, "Invalid input for field/attribute callback_url. Value: 'None'. Mandatory field missing.")
	}
	if err := s.Conductor.Heartbeat(r.Context(), n, *cb, ""); err != nil {
		return err
	}
	w.WriteHeader(http.StatusAccepted)
	return nil
}
