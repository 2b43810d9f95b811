package api

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/core/states"
	"github.com/rivetmetal/rivet/core/version"
)

// getStates serves GET /v1/nodes/{node}/states (reference §11.4).
func (s *server) getStates(w http.ResponseWriter, r *http.Request) error {
	n, err := s.getNodeByIdent(r, r.PathValue("node"))
	if err != nil {
		return err
	}
	view, err := s.nodeView(r, n, chassisUUIDs{})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, selectFields(view, []string{"console_enabled", "last_error", "power_state",
		"provision_state", "provision_updated_at", "target_power_state", "target_provision_state",
		"raid_config", "target_raid_config"}))
	return nil
}

// accepted answers 202 with Location pointing at the node's states.
func accepted(w http.ResponseWriter, r *http.Request, ident string) {
	w.Header().Set("Location", BaseURL(r)+"/v1/nodes/"+ident+"/states")
	w.WriteHeader(http.StatusAccepted)
}

// powerTargets are the power targets with the microversion of each.
var powerTargets = map[string]version.Version{"power on": v1_1, "power off": v1_1, "rebooting": v1_1,
	"soft power off": v1_27, "soft rebooting": v1_27}

// putPowerState serves PUT /v1/nodes/{node}/states/power: 202. The checks
// run in Ironic's order: the arguments' types, then 406 for a soft target or
// a non-zero timeout below 1.27, then a timeout below 1, an unknown target
// and a node being cleaned (400).
func (s *server) putPowerState(w http.ResponseWriter, r *http.Request) error {
	ident := r.PathValue("node")
	n, err := s.getNodeByIdent(r, ident)
	if err != nil {
		return err
	}
	body, err := readObject(r)
	if err != nil {
		return err
	}
	if err := body.only("target", "target", "timeout"); err != nil {
		return err
	}
	target, _, err := body.str("target", false)
	if err != nil {
		return err
	}
	if target == nil {
		return errorf(http.StatusBadRequest, "Invalid input for field/attribute target. Value: 'None'. Mandatory field missing.")
	}
	timeout, err := body.pyInteger("timeout")
	if err != nil {
		return err
	}
	since, known := powerTargets[*target]
	if (since == v1_27 || (timeout != nil && *timeout != 0)) && VersionFrom(r.Context()).Less(v1_27) {
		return errNotAcceptable()
	}
	if timeout != nil && *timeout < 1 {
		return errorf(http.StatusBadRequest, "timeout has to be positive integer")
	}
	if !known {
		return errorf(http.StatusBadRequest, "The requested action %q can not be performed on node %q while it is in state %q.",
			*target, ident, powerStateName(n))
	}
	if st := states.State(n.ProvisionState); st == states.Cleaning || st == states.CleanWait {
		return &states.InvalidTransitionError{Action: *target, Node: ident, State: st}
	}
	if (*target == "power off" || *target == "soft power off") && n.DisablePowerOff {
		// Ironic's PowerStateFailure (an InvalidState, 409) for a node
		// whose disable_power_off (1.95) is set.
		return errorf(http.StatusConflict, "Failed to set node power state to %s.", *target)
	}
	seconds := 0
	if timeout != nil {
		seconds = int(*timeout)
	}
	if err := s.Conductor.ChangeNodePowerState(r.Context(), n, *target, seconds); err != nil {
		return err
	}
	accepted(w, r, ident)
	return nil
}

func powerStateName(n *objects.Node) string {
	if n.PowerState == nil {
		return "None"
	}
	return *n.PowerState
}

// verbSince is the microversion of each provision verb (Ironic's
// MIN_VERB_VERSIONS); verbs Rivet does not serve yet are 406.
var verbSince = map[string]version.Version{
	"active": v1_1, "deleted": v1_1, "rebuild": v1_1,
	"manage": v1_4, "provide": v1_4, "inspect": v1_6, "abort": v1_13, "clean": v1_15, "adopt": v1_17,
	"rescue": v1_38, "unrescue": v1_38, "deploy": v1_73, "undeploy": v1_73,
	// unhold (1.85) is checked after the state, as Ironic does: from a
	// state without a hold it is 400 at every version.
	"unhold": v1_1,
}

// laterVerbs are Ironic verbs Rivet does not serve yet.
var laterVerbs = map[string]bool{"service": true}

// laterProvisionArgs are provision body attributes Rivet does not take yet.
var laterProvisionArgs = []string{"deploy_steps", "disable_ramdisk", "service_steps", "runbook"}

// putProvisionState serves PUT /v1/nodes/{node}/states/provision: 202.
func (s *server) putProvisionState(w http.ResponseWriter, r *http.Request) error {
	ident := r.PathValue("node")
	v := VersionFrom(r.Context())
	n, err := s.getNodeByIdent(r, ident)
	if err != nil {
		return err
	}
	body, err := readObject(r)
	if err != nil {
		return err
	}
	for a := range body {
		if laterProvisionArg(a, v) {
			return errNotAcceptable()
		}
	}
	if err := body.only("target", "target", "configdrive", "clean_steps", "deploy_steps", "rescue_password"); err != nil {
		return err
	}
	target, _, err := body.str("target", false)
	if err != nil {
		return err
	}
	if target == nil {
		return errorf(http.StatusBadRequest, "Invalid input for field/attribute target. Value: 'None'. Mandatory field missing.")
	}
	verb := *target
	since, known := verbSince[verb]
	if laterVerbs[verb] || (known && v.Less(since)) {
		return errNotAcceptable()
	}
	if err := inspectionGates(v, verb, n); err != nil {
		return err
	}
	state := states.State(n.ProvisionState)
	if !known {
		return &states.InvalidTransitionError{Action: verb, Node: n.UUID, State: state}
	}
	configdrive, err := provisionConfigdrive(body, verb, v)
	if err != nil {
		return err
	}
	deploySteps, err := provisionDeploySteps(body, verb)
	if err != nil {
		return err
	}
	steps, err := cleanSteps(body, verb)
	if err != nil {
		return err
	}
	event, _ := states.VerbEvent(verb)
	if _, err := states.Next(n.UUID, state, event); err != nil {
		if n.Reservation != nil {
			return errorf(http.StatusConflict, "Node %s is locked by host %s, please retry after the current operation is completed.", n.UUID, *n.Reservation)
		}
		return &states.InvalidTransitionError{Action: verb, Node: n.UUID, State: state}
	}
	if verb == "unhold" && v.Less(v1_85) {
		return errNotAcceptable()
	}
	password, err := rescuePassword(body, verb)
	if err != nil {
		return err
	}
	if (verb == "active" || verb == "deploy" || verb == "rebuild") && n.Maintenance {
		return errorf(http.StatusBadRequest, "The provisioning operation can't be performed on node %s because it's in maintenance mode.", n.UUID)
	}
	ctx := r.Context()
	switch verb {
	case "active", "deploy":
		err = s.Conductor.DoNodeDeploy(ctx, n, false, configdrive, deploySteps)
	case "rebuild":
		err = s.Conductor.DoNodeDeploy(ctx, n, true, configdrive, deploySteps)
	case "deleted", "undeploy":
		err = s.Conductor.DoNodeTearDown(ctx, n)
	case "rescue":
		err = s.Conductor.DoNodeRescue(ctx, n, password)
	case "unrescue":
		err = s.Conductor.DoNodeUnrescue(ctx, n)
	case "inspect":
		err = s.Conductor.InspectHardware(ctx, n)
	case "clean":
		err = s.Conductor.DoNodeClean(ctx, n, steps)
	default:
		err = s.Conductor.DoProvisioningAction(ctx, n, verb)
	}
	if err != nil {
		return err
	}
	accepted(w, r, ident)
	return nil
}

// rescuePassword returns the rescue_password, only valid with "rescue"
// and required, non-blank, with it (Ironic's provision checks).
func rescuePassword(body object, verb string) (string, error) {
	pw, present, err := body.str("rescue_password", true)
	if err != nil {
		return "", err
	}
	if present && pw != nil && verb != "rescue" {
		return "", errorf(http.StatusBadRequest, "\"rescue_password\" is only valid when setting target provision state to rescue")
	}
	if verb != "rescue" {
		return "", nil
	}
	if pw == nil || strings.TrimSpace(*pw) == "" {
		return "", errorf(http.StatusBadRequest, "A non-empty \"rescue_password\" is required when setting target provision state to rescue")
	}
	return *pw, nil
}

// cleanSteps returns the clean_steps, required with "clean" and only valid
// with it; each step needs an interface and a step name.
func cleanSteps(body object, verb string) ([]map[string]any, error) {
	raw, present := body["clean_steps"]
	if verb != "clean" {
		if present {
			return nil, errorf(http.StatusBadRequest, "\"clean_steps\" is only valid when setting target provision state to clean")
		}
		return nil, nil
	}
	if !present || isNull(raw) {
		return nil, errorf(http.StatusBadRequest, "\"clean_steps\" is required when setting target provision state to clean")
	}
	var steps []map[string]any
	if err := json.Unmarshal(raw, &steps); err != nil {
		return nil, errorf(http.StatusBadRequest, "Invalid clean_steps: expected a list of objects")
	}
	interfaces := map[string]bool{"power": true, "management": true, "deploy": true, "bios": true, "raid": true, "firmware": true}
	for _, st := range steps {
		iface, _ := st["interface"].(string)
		name, _ := st["step"].(string)
		if !interfaces[iface] || name == "" {
			return nil, errorf(http.StatusBadRequest, "Invalid clean_steps: each step needs \"interface\" (one of bios, deploy, firmware, management, power, raid) and \"step\"")
		}
	}
	return steps, nil
}

// setMaintenance serves PUT (with an optional {"reason"}) and DELETE
// /v1/nodes/{node}/maintenance: saved by the conductor, 202.
func (s *server) setMaintenance(on bool) apiFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		ident := r.PathValue("node")
		n, err := s.getNodeByIdent(r, ident)
		if err != nil {
			return err
		}
		var reason *string
		if on {
			if reason, err = maintenanceReason(r); err != nil {
				return err
			}
		}
		n.Maintenance = on
		n.MaintenanceReason = reason
		if _, err := s.Conductor.UpdateNode(r.Context(), n); err != nil {
			return err
		}
		w.WriteHeader(http.StatusAccepted)
		return nil
	}
}

// maintenanceReason takes the reason from ?reason= or a {"reason"} body.
func maintenanceReason(r *http.Request) (*string, error) {
	if q := r.URL.Query(); q.Has("reason") {
		reason := q.Get("reason")
		return &reason, nil
	}
	data, err := readBody(r)
	if err != nil || len(data) == 0 {
		return nil, err
	}
	var body object
	if err := decodeJSON(data, &body); err != nil {
		return nil, err
	}
	if err := body.only("reason", "reason"); err != nil {
		return nil, err
	}
	reason, _, err := body.str("reason", true)
	return reason, err
}
