package api

import (
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"slices"

	"github.com/google/uuid"
	"github.com/rivetmetal/rivet/core/agenttoken"
	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/core/rpc"
	"github.com/rivetmetal/rivet/core/states"
	"github.com/rivetmetal/rivet/core/version"
	"github.com/rivetmetal/rivet/db"
	"github.com/uptrace/bun"
)

// Microversions of inspection (named, not v1_NN, so they never clash with
// another file's).
var (
	// verInspectWait: "inspect wait" is shown as itself; below, as
	// "inspecting" (Ironic's allow_inspect_wait_state).
	verInspectWait = version.Version{Major: 1, Minor: 39}
	// verInspectAbort: abort of a node in "inspect wait".
	verInspectAbort = version.Version{Major: 1, Minor: 41}
	// verNodeInventory: GET /v1/nodes/{node}/inventory.
	verNodeInventory = version.Version{Major: 1, Minor: 81}
	// verContinueInspection: POST /v1/continue_inspection with Ironic's
	// own answer (1.1 also accepts it, answering as ironic-inspector).
	verContinueInspection = version.Version{Major: 1, Minor: 84}
)

// provisionStateView is a node's provision_state as version v shows it:
// null for available before 1.2, "inspecting" for "inspect wait" before
// 1.39 (Ironic's hide_fields_in_newer_versions).
func provisionStateView(v version.Version, ps string) any {
	switch {
	case v.Less(v1_2) && ps == string(states.Available):
		return nil // NOSTATE before 1.2
	case v.Less(verInspectWait) && ps == string(states.InspectWait):
		return string(states.Inspecting)
	}
	return ps
}

// inspectionGates are the provision-state checks of inspection's
// microversions: abort of a node in "inspect wait" is 406 below 1.41.
func inspectionGates(v version.Version, verb string, n *objects.Node) error {
	if verb == "abort" && n.ProvisionState == string(states.InspectWait) && v.Less(verInspectAbort) {
		return errNotAcceptable()
	}
	return nil
}

// patchInspectingGate is Ironic's update rule from 1.39: a node in
// "inspecting" cannot be patched (409); below, it can (compatibility).
func patchInspectingGate(v version.Version, n *objects.Node) error {
	if n.ProvisionState == string(states.Inspecting) && !v.Less(verInspectWait) {
		return errorf(http.StatusConflict, "Cannot update node \"%s\" while it is in state \"%s\".", n.UUID, states.Inspecting)
	}
	return nil
}

// getInventory serves GET /v1/nodes/{node}/inventory (1.81; 404 below, as
// Ironic's _lookup): the inventory and plugin data the last in-band
// inspection stored, secrets masked (none is stored: the conductor masks
// them before storing). 404 InventoryNotRecorded without one.
func (s *server) getInventory(w http.ResponseWriter, r *http.Request) error {
	if VersionFrom(r.Context()).Less(verNodeInventory) {
		return errorf(http.StatusNotFound, msgNotFound)
	}
	n, err := s.getNodeByIdent(r, r.PathValue("node"))
	if err != nil {
		return err
	}
	row, err := s.Store.DB().NodeInventoryOf(r.Context(), n.ID)
	if errors.Is(err, db.ErrNotFound) {
		return errorf(http.StatusNotFound, "Node inventory record for node %s could not be found.", n.UUID)
	}
	if err != nil {
		return err
	}
	var inv, pd map[string]any
	if err := json.Unmarshal(orEmptyJSON(row.InventoryData), &inv); err != nil {
		return err
	}
	if err := json.Unmarshal(orEmptyJSON(row.PluginData), &pd); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"inventory": maskDict(inv), "plugin_data": maskDict(pd)})
	return nil
}

func orEmptyJSON(b json.RawMessage) json.RawMessage {
	if len(b) == 0 || string(b) == "null" {
		return json.RawMessage(`{}`)
	}
	return b
}

// continueInspection serves POST /v1/continue_inspection?node_uuid= (1.84,
// and 1.1 for ironic-inspector's clients; 404 "API version 1.84 or newer
// is required" at any other, and for node_uuid below 1.84): a ramdisk
// agent's inspection data. The body is {"inventory": {...,
// "interfaces": [{"mac_address"}, ...]}, ...}: the rest is plugin data.
// The node is found as Ironic's lookup_node does — by the MAC addresses
// of its ports, then by the BMC addresses cached when its inspection
// started — and only a node in "inspect wait" is (404 otherwise, the same
// answer as for no node, saying nothing more). From 1.84 the agent gets
// its token as from lookup (get_node_with_token) and the lookup answer;
// at 1.1 {"uuid"}. 202 either way; the conductor processes the data in
// the background. No authentication, as lookup: the agent has none.
func (s *server) continueInspection(w http.ResponseWriter, r *http.Request) error {
	v := VersionFrom(r.Context())
	nodeUUID := r.URL.Query().Get("node_uuid")
	newEndpoint := !v.Less(verContinueInspection)
	if (!newEndpoint && v != v1_1) || (nodeUUID != "" && !newEndpoint) {
		return errorf(http.StatusNotFound, "API version 1.84 or newer is required")
	}
	if nodeUUID != "" && !isUUID(nodeUUID) {
		return errorf(http.StatusBadRequest, "Expected a UUID for node_uuid but received %s.", nodeUUID)
	}
	data, err := readBody(r)
	if err != nil {
		return err
	}
	var body map[string]any
	if err := json.Unmarshal(data, &body); err != nil || body == nil {
		return errorf(http.StatusBadRequest, "Invalid data: the body must be a JSON object with an \"inventory\" object.")
	}
	inventory, macs, bmcs, err := inspectionLookupData(body)
	if err != nil {
		return err
	}
	if len(macs) == 0 && len(bmcs) == 0 && nodeUUID == "" {
		return errorf(http.StatusBadRequest, "No lookup information provided")
	}
	delete(body, "inventory")
	n, err := s.inspectionLookup(r, nodeUUID, macs, bmcs)
	if errors.Is(err, errAutoEnrollPossible) {
		if n, err = s.autoEnroll(r, macs, bmcs); err != nil {
			return err
		}
		// The flag ironic-inspector's rules and clients know.
		body["auto_discovered"] = true
	}
	if err != nil {
		return err
	}
	var token any
	if newEndpoint {
		// Before continue_inspection: processing takes time, and issuing
		// the token needs the node's lease (Ironic's order).
		withToken, err := s.Conductor.GetNodeWithToken(r.Context(), n)
		if err != nil {
			return err
		}
		n = withToken
		if t := agenttoken.Stored(n.DriverInternalInfo); t != "" {
			token = t
		}
	}
	if err := s.Conductor.ContinueInspection(r.Context(), n, inventory, body); err != nil {
		var remote *rpc.RemoteError
		if errors.As(err, &remote) && remote.Code == http.StatusNotFound {
			return errorf(http.StatusNotFound, msgNotFound)
		}
		return err
	}
	if newEndpoint {
		writeJSON(w, http.StatusAccepted, lookupBody(r, n, token))
		return nil
	}
	writeJSON(w, http.StatusAccepted, map[string]any{"uuid": n.UUID})
	return nil
}

// inspectionLookupData checks the body as Ironic's DATA_VALIDATOR (an
// "inventory" object with a non-empty "interfaces" list of objects with a
// string "mac_address"; bmc_address and bmc_v6address strings or null)
// and returns the inventory, its valid MAC addresses and BMC addresses.
func inspectionLookupData(body map[string]any) (map[string]any, []string, []string, error) {
	bad := func(msg string) error { return errorf(http.StatusBadRequest, "Invalid data: %s", msg) }
	inv, ok := body["inventory"].(map[string]any)
	if !ok {
		return nil, nil, nil, bad("'inventory' is a required property and must be an object")
	}
	ifaces, ok := inv["interfaces"].([]any)
	if !ok || len(ifaces) == 0 {
		return nil, nil, nil, bad("inventory 'interfaces' is required: a non-empty list")
	}
	var macs, bmcs []string
	for _, raw := range ifaces {
		iface, ok := raw.(map[string]any)
		if !ok {
			return nil, nil, nil, bad("each inventory interface must be an object")
		}
		mac, ok := iface["mac_address"].(string)
		if !ok {
			return nil, nil, nil, bad("each inventory interface needs a string 'mac_address'")
		}
		if m, ok := normalizeMAC(mac); ok && !slices.Contains(macs, m) {
			macs = append(macs, m)
		}
	}
	for _, k := range []string{"bmc_address", "bmc_v6address"} {
		switch a := inv[k].(type) {
		case nil:
		case string:
			if a != "" {
				bmcs = append(bmcs, a)
			}
		default:
			return nil, nil, nil, bad("inventory '" + k + "' must be a string or null")
		}
	}
	return inv, macs, bmcs, nil
}

// inspectionLookup is Ironic's inspect_utils.lookup_node: by node_uuid,
// then by MACs (several nodes: not found; a node other than node_uuid's:
// not found), which must leave a node in "inspect wait", then by the BMC
// addresses cached on nodes in "inspect wait" (the node found by MACs must
// be among them; without one, exactly one must match). Every failure is
// the same 404, saying nothing of which check failed.
func (s *server) inspectionLookup(r *http.Request, nodeUUID string, macs, bmcs []string) (*objects.Node, error) {
	ctx := r.Context()
	notFound := func(why string) (*objects.Node, error) {
		s.Logger.WarnContext(ctx, "inspection lookup failed: "+why, slog.Any("macs", macs), slog.Any("bmc_addresses", bmcs))
		return nil, errorf(http.StatusNotFound, msgNotFound)
	}
	var n *objects.Node
	if nodeUUID != "" {
		found, err := s.Store.GetNode(ctx, nodeUUID)
		if isNotFound(err) {
			return notFound("no node " + nodeUUID)
		}
		if err != nil {
			return nil, err
		}
		n = found
	}
	if len(macs) > 0 {
		ports, err := s.Store.LoadAll(ctx, "Port", func(q *bun.SelectQuery) *bun.SelectQuery {
			return q.Where("?TableAlias.address IN (?)", bun.In(macs))
		})
		if err != nil {
			return nil, err
		}
		var byMAC *objects.Node
		for _, p := range ports {
			node, err := s.nodeByID(ctx, p.(*objects.Port).NodeID)
			if err != nil {
				return nil, err
			}
			if byMAC != nil && byMAC.ID != node.ID {
				return notFound("the MAC addresses belong to several nodes")
			}
			byMAC = node
		}
		if byMAC != nil {
			if n != nil && n.UUID != byMAC.UUID {
				return notFound("the MAC addresses belong to another node than node_uuid")
			}
			n = byMAC
		}
	}
	if n != nil && n.ProvisionState != string(states.InspectWait) {
		return notFound("node " + n.UUID + " is in state " + n.ProvisionState)
	}
	if len(bmcs) > 0 {
		waiting, err := s.Store.LoadAll(ctx, "Node", func(q *bun.SelectQuery) *bun.SelectQuery {
			return q.Where("?TableAlias.provision_state = ?", string(states.InspectWait))
		})
		if err != nil {
			return nil, err
		}
		var byBMC []*objects.Node
		for _, o := range waiting {
			cand := o.(*objects.Node)
			cached, _ := cand.DriverInternalInfo["lookup_bmc_addresses"].([]any)
			for _, a := range cached {
				if s, _ := a.(string); slices.Contains(bmcs, s) {
					byBMC = append(byBMC, cand)
					break
				}
			}
		}
		switch {
		case n != nil && len(byBMC) > 0 && !slices.ContainsFunc(byBMC, func(c *objects.Node) bool { return c.UUID == n.UUID }):
			return notFound("the node found by MAC addresses does not have the BMC address")
		case n == nil && len(byBMC) > 1:
			return notFound("several nodes have the BMC address and none the MAC addresses")
		case n == nil && len(byBMC) == 1:
			n = byBMC[0]
		}
	}
	if n == nil {
		if s.AutoDiscovery.Enabled {
			return nil, errAutoEnrollPossible
		}
		return notFound("no node satisfies the MAC and BMC addresses")
	}
	return n, nil
}

// errAutoEnrollPossible is Ironic's AutoEnrollPossible: no node matches
// the data, and [auto_discovery] is enabled.
var errAutoEnrollPossible = errors.New("no node satisfies the MAC and BMC addresses")

// autoEnroll is Ironic's _auto_enroll: a node in enroll with the
// [auto_discovery] driver, inspect_interface agent (what processes the
// data), created through a conductor of the driver. Any failure is a bare
// 500, saying nothing to the caller (logged here).
func (s *server) autoEnroll(r *http.Request, macs, bmcs []string) (*objects.Node, error) {
	ctx := r.Context()
	obj, err := s.reg.New("Node")
	if err != nil {
		return nil, err
	}
	n := obj.(*objects.Node)
	n.UUID, n.Driver, n.ProvisionState = uuid.NewString(), s.AutoDiscovery.Driver, string(states.Enroll)
	agent := "agent"
	n.InspectInterface = &agent
	s.Logger.InfoContext(ctx, "enrolling a newly discovered node", slog.String("node", n.UUID), slog.String("driver", n.Driver),
		slog.Any("macs", macs), slog.Any("bmc_addresses", bmcs))
	stored, err := s.Conductor.CreateNode(ctx, n)
	if err != nil {
		s.Logger.ErrorContext(ctx, "enrolling a discovered node failed", slog.String("driver", n.Driver), slog.Any("error", err))
		return nil, errorf(http.StatusInternalServerError, "An unknown exception occurred.")
	}
	return stored, nil
}
