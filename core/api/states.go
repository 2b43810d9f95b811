package api

import (
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/uptrace/bun"

	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/core/pyrepr"
	"github.com/rivetmetal/rivet/core/states"
	"github.com/rivetmetal/rivet/core/steps"
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
	// service (1.87) is checked after the state, as Ironic does: from a
	// state other than active or service failed it is 400 at every version.
	"service": v1_1,
}

// laterVerbs are Ironic verbs Rivet does not serve yet.
var laterVerbs = map[string]bool{}

// laterProvisionArgs are provision body attributes Rivet does not take yet.
// disable_ramdisk is checked with its verb: see checkDisableRamdisk.
var laterProvisionArgs = []string{"deploy_steps"}

// Servicing's microversions: the service verb and the node's service_step
// (1.87), disable_ramdisk with service (1.108).
var (
	v1_87  = version.Version{Major: 1, Minor: 87}
	v1_108 = version.Version{Major: 1, Minor: 108}
)

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
	if err := body.only("target", "target", "configdrive", "clean_steps", "deploy_steps", "rescue_password",
		"service_steps", "disable_ramdisk", "runbook"); err != nil {
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
	if verb == "abort" && n.ProvisionState == string(states.DeployWait) && v.Less(verDeployWaitAbort) {
		return errNotAcceptable() // Ironic's allow_deploy_abort
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
	rawService, err := serviceStepsArg(body)
	if err != nil {
		return err
	}
	disableRamdisk, _, err := looseBool(body, "disable_ramdisk")
	if err != nil {
		return err
	}
	runbook, _, err := body.str("runbook", true)
	if err != nil {
		return err
	}
	var steps []map[string]any
	if runbook == nil || verb != "clean" {
		if steps, err = cleanSteps(body, verb); err != nil {
			return err
		}
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
	// Ironic's order after the state: the runbook, disable_ramdisk, then
	// service_steps outside service, then the service verb's version.
	if runbook != nil {
		rb, err := s.provisionRunbook(r, n, verb, *runbook, body)
		if err != nil {
			return err
		}
		switch verb {
		case "clean":
			steps = rb.steps
		case "service":
			rawService = rb.raw
		}
		disableRamdisk = &rb.disableRamdisk
	}
	if err := checkDisableRamdisk(verb, disableRamdisk, v); err != nil {
		return err
	}
	if rawService != nil && verb != "service" {
		return errorf(http.StatusBadRequest, "\"service_steps\" is only valid when setting target provision state to service")
	}
	if verb == "service" && v.Less(v1_87) {
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
		err = s.Conductor.DoNodeClean(ctx, n, steps, disableRamdisk != nil && *disableRamdisk)
	case "service":
		var service []map[string]any
		if service, err = serviceSteps(rawService); err == nil {
			err = s.Conductor.DoNodeService(ctx, n, service, disableRamdisk != nil && *disableRamdisk)
		}
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

// runbookSteps are a runbook's steps as a clean or service request.
type runbookSteps struct {
	steps          []map[string]any
	raw            []any
	disableRamdisk bool
}

// provisionRunbook is Ironic's _handle_runbook (API 1.92, before 1.112's
// runbook traits): the runbook (UUID or name) must be one of the node's
// traits; with clean or service its steps, in their order, replace
// clean_steps or service_steps, which may not be given too; its
// disable_ramdisk applies.
func (s *server) provisionRunbook(r *http.Request, n *objects.Node, verb, ident string, body object) (runbookSteps, error) {
	if VersionFrom(r.Context()).Less(v1_92) {
		return runbookSteps{}, errNotAcceptable()
	}
	col := "uuid"
	if !isUUID(ident) {
		if !validLogicalName(ident, VersionFrom(r.Context())) {
			return runbookSteps{}, errorf(http.StatusBadRequest, "Expected UUID or name for runbook: %s", ident)
		}
		col = "name"
	}
	obj, err := s.Store.Load(r.Context(), "Runbook", func(q *bun.SelectQuery) *bun.SelectQuery {
		return q.Where("?TableAlias.? = ?", bun.Ident(col), ident)
	})
	if isNotFound(err) {
		return runbookSteps{}, runbooks.notFound(ident)
	}
	if err != nil {
		return runbookSteps{}, err
	}
	rb := obj.(*objects.Runbook)
	if err := authorizeRunbookUse(r, rb); err != nil {
		return runbookSteps{}, err
	}
	traits, err := s.Store.NodeTraits(r.Context(), n.ID)
	if err != nil {
		return runbookSteps{}, err
	}
	if !slices.Contains(traits, rb.Name) {
		return runbookSteps{}, errorf(http.StatusBadRequest, "This runbook has not been approved for use on this node %s. Please ask an administrator to add it to your node traits.", n.UUID)
	}
	for _, k := range []string{"clean_steps", "service_steps"} {
		if raw, ok := body[k]; ok && !isNull(raw) && verb == strings.TrimSuffix(k, "_steps") {
			return runbookSteps{}, errorf(http.StatusBadRequest, "Please provide either \"%s\" or a runbook, but not both.", k)
		}
	}
	// With another verb no step applies; Ironic then refuses the
	// runbook's disable_ramdisk (a boolean, never absent) as given with a
	// verb other than clean or service.
	ordered := slices.Clone(rb.Steps)
	slices.SortStableFunc(ordered, func(a, b map[string]any) int { return stepOrder(a) - stepOrder(b) })
	out := runbookSteps{disableRamdisk: rb.DisableRamdisk}
	for _, st := range ordered {
		args, _ := st["args"].(map[string]any)
		if args == nil {
			args = map[string]any{}
		}
		m := map[string]any{"interface": st["interface"], "step": st["step"], "args": args}
		out.steps = append(out.steps, m)
		out.raw = append(out.raw, m)
	}
	return out, nil
}

// stepOrder is a runbook step's order (a number or a string of digits).
func stepOrder(st map[string]any) int {
	switch o := st["order"].(type) {
	case json.Number:
		n, _ := o.Int64()
		return int(n)
	case float64:
		return int(o)
	case string:
		n, _ := strconv.Atoi(o)
		return n
	}
	return 0
}

// serviceStepsArg returns the raw service_steps (null as absent) after
// checking it is a list, as Ironic's argument types do.
func serviceStepsArg(body object) ([]any, error) {
	raw, present := body["service_steps"]
	if !present || isNull(raw) {
		return nil, nil
	}
	var list []any
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, typeError("service_steps", raw, "list")
	}
	return list, nil
}

// serviceSteps checks the service verb's steps as Ironic's
// _check_service_steps: required and not empty, each an object with an
// interface among the step interfaces, a non-empty step name and optional
// object args, nothing else.
func serviceSteps(raw []any) ([]map[string]any, error) {
	if len(raw) == 0 {
		return nil, errorf(http.StatusBadRequest, "\"service_steps\" is required when setting target provision state to service")
	}
	out := make([]map[string]any, 0, len(raw))
	for i, it := range raw {
		st, ok := it.(map[string]any)
		if !ok {
			return nil, errorf(http.StatusBadRequest, "Invalid service_steps: %s is not of type 'object'", pyrepr.Value(it))
		}
		iface, _ := st["interface"].(string)
		name, _ := st["step"].(string)
		switch {
		case !slices.Contains(steps.CleanInterfaces, iface):
			return nil, errorf(http.StatusBadRequest, "Invalid service_steps: step %d needs \"interface\", one of %s", i, strings.Join(steps.CleanInterfaces, ", "))
		case name == "":
			return nil, errorf(http.StatusBadRequest, "Invalid service_steps: step %d needs \"step\", a non-empty string", i)
		}
		if args, present := st["args"]; present {
			if _, ok := args.(map[string]any); !ok {
				return nil, errorf(http.StatusBadRequest, "Invalid service_steps: %s is not of type 'object'", pyrepr.Value(args))
			}
		}
		for k := range st {
			if !slices.Contains([]string{"interface", "step", "args", "order", "execute_on_child_nodes", "limit_child_node_execution"}, k) {
				return nil, errorf(http.StatusBadRequest, "Invalid service_steps: Additional properties are not allowed ('%s' was unexpected)", k)
			}
		}
		out = append(out, st)
	}
	return out, nil
}

// checkDisableRamdisk is Ironic's check_allow_disable_ramdisk: with clean
// from 1.70, with service from 1.108 (406 below); with any other verb 400.
func checkDisableRamdisk(verb string, disable *bool, v version.Version) error {
	switch {
	case disable == nil:
		return nil
	case verb == "clean" && !v.Less(verCleanDisableRamdisk), verb == "service" && !v.Less(v1_108):
		return nil
	case verb == "service" || verb == "clean":
		return &Error{Status: http.StatusNotAcceptable, Message: "disable_ramdisk is not acceptable in this API version"}
	}
	return errorf(http.StatusBadRequest, "disable_ramdisk is supported only with manual cleaning or servicing")
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
