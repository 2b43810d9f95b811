package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/rivetmetal/rivet/core/agenttoken"
	"github.com/rivetmetal/rivet/core/catalog"
	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/core/rpc"
	"github.com/rivetmetal/rivet/core/states"
	"github.com/rivetmetal/rivet/db"
	"github.com/uptrace/bun"
)

// fakeConductor is a hand-written conductor over the same store: it
// finishes every operation at once (fake-hardware with fake deploy) and
// refuses what Ironic's conductor refuses, with classed errors.
type fakeConductor struct {
	store *db.Store
	mu    sync.Mutex
	calls []string
	boot  map[string]rpc.BootDevice
	vifs  map[string][]string // node UUID → attached VIF ids
	// vifInfo is the vif_info of the last VIFAttach.
	vifInfo map[string]any
	// noNMI makes InjectNMI answer as for a driver without NMI.
	noNMI bool
	// tokenCapped makes GetNodeWithToken answer as a client capped below
	// RPC 1.4.
	tokenCapped bool
	// powerUser is the API user the last ChangeNodePowerState carried.
	powerUser string
	// deploy holds the arguments of the last DoNodeDeploy.
	deploy struct {
		configdrive any
		steps       []map[string]any
	}
	// cleanSteps are the steps of the last DoNodeClean.
	cleanSteps []map[string]any
	// service holds the arguments of the last DoNodeService.
	service struct {
		steps          []map[string]any
		disableRamdisk bool
	}
	// heartbeat holds the agent fields of the last heartbeat passed on.
	heartbeat struct {
		agentVersion string
		extra        rpc.HeartbeatExtra
	}
}

func newFakeConductor(store *db.Store) *fakeConductor {
	return &fakeConductor{store: store, boot: map[string]rpc.BootDevice{}, vifs: map[string][]string{}}
}

func (f *fakeConductor) record(call string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, call)
}

func (f *fakeConductor) locked(n *objects.Node) error {
	if n.Reservation != nil {
		return &rpc.RemoteError{Class: "NodeLocked", Code: http.StatusConflict,
			Message: fmt.Sprintf("Node %s is locked by host %s, please retry after the current operation is completed.", n.UUID, *n.Reservation)}
	}
	return nil
}

// fakeCatalog is what a conductor serving fake-hardware with every
// interface offers.
var fakeCatalog = catalog.ForConductor([]catalog.Served{{HardwareType: "fake-hardware",
	Interfaces: []string{"power", "management", "deploy", "inspect", "raid"}}}, catalog.Options{})

// checkInterfaces is the conductor's check of a node's interfaces, with
// its classed errors.
func checkInterfaces(n *objects.Node) error {
	_, err := fakeCatalog.Check(n)
	var nf *catalog.NotFoundError
	var inc *catalog.IncompatibleError
	switch {
	case errors.As(err, &nf):
		return &rpc.RemoteError{Class: "InterfaceNotFoundInEntrypoint", Code: http.StatusBadRequest, Message: err.Error()}
	case errors.As(err, &inc):
		return &rpc.RemoteError{Class: "IncompatibleInterface", Code: http.StatusBadRequest, Message: err.Error()}
	}
	return err
}

func (f *fakeConductor) CreateNode(ctx context.Context, n *objects.Node) (*objects.Node, error) {
	f.record("create_node")
	if n.Driver != "fake-hardware" {
		return nil, &rpc.NoValidHost{Driver: n.Driver}
	}
	if err := checkInterfaces(n); err != nil {
		return nil, err
	}
	if err := f.store.Create(ctx, n); err != nil {
		if db.IsUniqueViolation(err) {
			return nil, f.duplicate(ctx, n)
		}
		return nil, err
	}
	return n, nil
}

// duplicate answers a create that collided as the real conductor does
// (core/conductor duplicateNode): UUID, then name, then instance UUID.
func (f *fakeConductor) duplicate(ctx context.Context, n *objects.Node) error {
	taken := func(col string, val any) bool {
		ok, err := f.store.DB().Bun().NewSelect().Table("nodes").Where("? = ?", bun.Ident(col), val).Exists(ctx)
		return err == nil && ok
	}
	conflict := func(class, msg string) error {
		return &rpc.RemoteError{Class: class, Code: http.StatusConflict, Message: msg}
	}
	switch {
	case taken("uuid", n.UUID):
		return conflict("NodeAlreadyExists", "A node with UUID "+n.UUID+" already exists.")
	case n.Name != nil && taken("name", *n.Name):
		return conflict("DuplicateName", "A node with name "+*n.Name+" already exists.")
	case n.InstanceUUID != nil && taken("instance_uuid", *n.InstanceUUID):
		return conflict("InstanceAssociated", "Instance "+*n.InstanceUUID+
			" is already associated with a node, it cannot be associated with this other node "+n.UUID)
	}
	return conflict("NodeAlreadyExists", "A node with UUID "+n.UUID+" already exists.")
}

func (f *fakeConductor) UpdateNode(ctx context.Context, n *objects.Node) (*objects.Node, error) {
	f.record("update_node")
	if err := f.locked(n); err != nil {
		return nil, err
	}
	if err := checkInterfaces(n); err != nil {
		return nil, err
	}
	return n, f.store.Save(ctx, n)
}

func (f *fakeConductor) DestroyNode(ctx context.Context, n *objects.Node) error {
	f.record("destroy_node")
	if !states.DeleteAllowed[states.State(n.ProvisionState)] {
		return &rpc.RemoteError{Class: "InvalidState", Code: http.StatusConflict,
			Message: fmt.Sprintf("Can not delete node \"%s\" while it is in provision state \"%s\".", n.UUID, n.ProvisionState)}
	}
	for _, table := range []string{"ports", "portgroups", "volume_connectors", "volume_targets"} {
		if _, err := f.store.DB().Bun().NewDelete().Table(table).Where("node_id = ?", n.ID).Exec(ctx); err != nil {
			return err
		}
	}
	return f.store.Delete(ctx, n)
}

func (f *fakeConductor) ChangeNodePowerState(ctx context.Context, n *objects.Node, state string, timeout int) error {
	call := "change_node_power_state " + state
	if timeout != 0 {
		call += fmt.Sprintf(" timeout=%d", timeout)
	}
	f.record(call)
	f.mu.Lock()
	f.powerUser = rpc.User(ctx)
	f.mu.Unlock()
	if err := f.locked(n); err != nil {
		return err
	}
	switch state {
	case "rebooting", "soft rebooting":
		state = "power on"
	case "soft power off":
		state = "power off"
	}
	n.PowerState = &state
	return f.store.Save(ctx, n)
}

func (f *fakeConductor) GetBootDevice(_ context.Context, n *objects.Node) (rpc.BootDevice, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.boot[n.UUID], nil
}

func (f *fakeConductor) SetBootDevice(_ context.Context, n *objects.Node, device string, persistent bool) error {
	if device != "pxe" && device != "disk" {
		return &rpc.RemoteError{Class: "InvalidParameterValue", Code: http.StatusBadRequest,
			Message: fmt.Sprintf("Invalid boot device %s specified.", device)}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.boot[n.UUID] = rpc.BootDevice{BootDevice: &device, Persistent: &persistent}
	return nil
}

func (f *fakeConductor) GetSupportedBootDevices(context.Context, *objects.Node) ([]string, error) {
	return []string{"pxe", "disk"}, nil
}

// move runs a verb to its resting state, as fake-hardware does in ~100 ms.
func (f *fakeConductor) move(ctx context.Context, n *objects.Node, e states.Event) error {
	if err := f.locked(n); err != nil {
		return err
	}
	to, err := states.Next(n.UUID, states.State(n.ProvisionState), e)
	if err != nil {
		return err
	}
	for !states.IsStable(to) {
		next := states.Done
		if to == states.Deleting {
			next = states.Clean
		}
		if to, err = states.Next(n.UUID, to, next); err != nil {
			return err
		}
	}
	now := time.Now().UTC()
	n.ProvisionState, n.TargetProvisionState, n.ProvisionUpdatedAt = string(to), nil, &now
	return f.store.Save(ctx, n)
}

func (f *fakeConductor) DoNodeDeploy(ctx context.Context, n *objects.Node, rebuild bool, configdrive any, steps ...[]map[string]any) error {
	f.mu.Lock()
	f.deploy.configdrive, f.deploy.steps = configdrive, nil
	if len(steps) > 0 {
		f.deploy.steps = steps[0]
	}
	f.mu.Unlock()
	f.record("do_node_deploy")
	if rebuild {
		return f.move(ctx, n, states.Rebuild)
	}
	return f.move(ctx, n, states.Deploy)
}

func (f *fakeConductor) DoNodeTearDown(ctx context.Context, n *objects.Node) error {
	f.record("do_node_tear_down")
	return f.move(ctx, n, states.Delete)
}

func (f *fakeConductor) DoNodeClean(ctx context.Context, n *objects.Node, steps []map[string]any, disableRamdisk ...bool) error {
	f.record("do_node_clean")
	if len(disableRamdisk) > 0 && disableRamdisk[0] {
		f.record("do_node_clean disable_ramdisk")
	}
	f.mu.Lock()
	f.cleanSteps = steps
	f.mu.Unlock()
	if err := f.move(ctx, n, states.Clean); err != nil {
		return err
	}
	n.ProvisionState = string(states.Manageable) // manual cleaning returns to manageable
	return f.store.Save(ctx, n)
}

// DoNodeService records its arguments and services at once: servicing,
// then active.
func (f *fakeConductor) DoNodeService(ctx context.Context, n *objects.Node, steps []map[string]any, disableRamdisk bool) error {
	f.record("do_node_service")
	f.mu.Lock()
	f.service.steps, f.service.disableRamdisk = steps, disableRamdisk
	f.mu.Unlock()
	return f.move(ctx, n, states.ServiceEv)
}

func (f *fakeConductor) DoProvisioningAction(ctx context.Context, n *objects.Node, action string) error {
	f.record("do_provisioning_action " + action)
	e, _ := states.VerbEvent(action)
	return f.move(ctx, n, e)
}

func (f *fakeConductor) InspectHardware(ctx context.Context, n *objects.Node) error {
	f.record("inspect_hardware")
	return f.move(ctx, n, states.Inspect)
}

func (f *fakeConductor) ValidateDriverInterfaces(context.Context, *objects.Node) (map[string]rpc.InterfaceValidation, error) {
	reason := "not supported"
	return map[string]rpc.InterfaceValidation{"power": {Result: true}, "management": {Result: true},
		"deploy": {Result: true}, "console": {Result: false, Reason: &reason}}, nil
}

func (f *fakeConductor) GetNodeVendorPassthruMethods(context.Context, *objects.Node) (map[string]any, error) {
	return map[string]any{}, nil
}

func (f *fakeConductor) CreatePort(ctx context.Context, _ *objects.Node, p *objects.Port) (*objects.Port, error) {
	f.record("create_port")
	return p, f.store.Create(ctx, p)
}

func (f *fakeConductor) UpdatePort(ctx context.Context, n *objects.Node, p *objects.Port) (*objects.Port, error) {
	f.record("update_port")
	if err := f.locked(n); err != nil {
		return nil, err
	}
	return p, f.store.Save(ctx, p)
}

func (f *fakeConductor) DestroyPort(ctx context.Context, _ *objects.Node, p *objects.Port) error {
	f.record("destroy_port")
	return f.store.Delete(ctx, p)
}

func (f *fakeConductor) UpdatePortgroup(ctx context.Context, _ *objects.Node, pg *objects.Portgroup) (*objects.Portgroup, error) {
	f.record("update_portgroup")
	return pg, f.store.Save(ctx, pg)
}

func (f *fakeConductor) DestroyPortgroup(ctx context.Context, _ *objects.Node, pg *objects.Portgroup) error {
	f.record("destroy_portgroup")
	return f.store.Delete(ctx, pg)
}

// Heartbeat checks the token digest as the conductor does (against the
// stored node) and records the call; a bad digest changes nothing.
func (f *fakeConductor) Heartbeat(ctx context.Context, n *objects.Node, cb, agentVersion, digest string, extra ...rpc.HeartbeatExtra) error {
	cur, err := f.store.GetNode(ctx, n.UUID)
	if err != nil {
		return err
	}
	if !agenttoken.ValidDigest(cur.DriverInternalInfo, digest) {
		return &rpc.RemoteError{Class: "InvalidParameterValue", Code: http.StatusBadRequest, Message: "Invalid or missing agent token received."}
	}
	f.mu.Lock()
	f.heartbeat.agentVersion, f.heartbeat.extra = agentVersion, rpc.HeartbeatExtra{}
	if len(extra) > 0 {
		f.heartbeat.extra = extra[0]
	}
	f.mu.Unlock()
	f.record("heartbeat " + cb)
	return nil
}

// GetNodeWithToken issues a token as the conductor does; capped makes it
// answer as a client capped below RPC 1.4.
func (f *fakeConductor) GetNodeWithToken(ctx context.Context, n *objects.Node) (*objects.Node, error) {
	f.record("get_node_with_token")
	if f.tokenCapped {
		return nil, &rpc.CapError{Method: "get_node_with_token"}
	}
	cur, err := f.store.GetNode(ctx, n.UUID)
	if err != nil {
		return nil, err
	}
	dii := map[string]any{}
	for k, v := range cur.DriverInternalInfo {
		dii[k] = v
	}
	switch {
	case !states.ExpectsAgent(states.State(cur.ProvisionState)):
		return cur, nil
	case agenttoken.Present(dii):
		dii[agenttoken.Key] = agenttoken.Masked
		cur.DriverInternalInfo = dii
		return cur, nil
	}
	dii[agenttoken.Key] = agenttoken.New()
	cur.DriverInternalInfo = dii
	return cur, f.store.Save(ctx, cur)
}

func (f *fakeConductor) GetDriverProperties(_ context.Context, driver string) (map[string]string, error) {
	return map[string]string{"deploy_kernel": "UUID of the deploy kernel."}, nil
}

func (f *fakeConductor) VIFList(_ context.Context, n *objects.Node) ([]rpc.VIF, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []rpc.VIF
	for _, id := range f.vifs[n.UUID] {
		out = append(out, rpc.VIF{ID: id})
	}
	return out, nil
}

// VIFAttach records the VIF; like the noop network interface it needs a
// free port per VIF, and refuses one attached already.
func (f *fakeConductor) VIFAttach(ctx context.Context, n *objects.Node, info map[string]any) error {
	id, _ := info["id"].(string)
	f.record("vif_attach " + id)
	f.mu.Lock()
	f.vifInfo = info
	f.mu.Unlock()
	if err := f.locked(n); err != nil {
		return err
	}
	ports, err := f.store.LoadAll(ctx, "Port", func(q *bun.SelectQuery) *bun.SelectQuery { return q.Where("node_id = ?", n.ID) })
	if err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if slices.Contains(f.vifs[n.UUID], id) {
		return &rpc.RemoteError{Class: "VifAlreadyAttached", Code: http.StatusConflict,
			Message: fmt.Sprintf("Unable to attach VIF because VIF %s is already attached to Ironic Port x", id)}
	}
	if len(f.vifs[n.UUID]) >= len(ports) {
		return &rpc.RemoteError{Class: "NoFreePhysicalPorts", Code: http.StatusBadRequest,
			Message: fmt.Sprintf("Unable to attach VIF %s, not enough free physical ports.", id)}
	}
	f.vifs[n.UUID] = append(f.vifs[n.UUID], id)
	return nil
}

func (f *fakeConductor) VIFDetach(_ context.Context, n *objects.Node, id string) error {
	f.record("vif_detach " + id)
	if err := f.locked(n); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	i := slices.Index(f.vifs[n.UUID], id)
	if i < 0 {
		return &rpc.RemoteError{Class: "VifNotAttached", Code: http.StatusBadRequest,
			Message: fmt.Sprintf("Unable to detach VIF %s from node %s because it is not attached to it.", id, n.UUID)}
	}
	f.vifs[n.UUID] = slices.Delete(f.vifs[n.UUID], i, i+1)
	return nil
}

func (f *fakeConductor) InjectNMI(_ context.Context, n *objects.Node) error {
	f.record("inject_nmi")
	if err := f.locked(n); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.noNMI {
		return &rpc.RemoteError{Class: "UnsupportedDriverExtension", Code: http.StatusBadRequest,
			Message: fmt.Sprintf("Driver %s does not support inject_nmi (disabled or not implemented).", n.Driver)}
	}
	return nil
}

// ContinueInspection records the call and resumes a node in inspect wait
// as the conductor does (processing is the conductor's, tested there).
func (f *fakeConductor) ContinueInspection(ctx context.Context, n *objects.Node, _, _ map[string]any) error {
	f.record("continue_inspection")
	if f.tokenCapped {
		return &rpc.CapError{Method: "continue_inspection"}
	}
	cur, err := f.store.GetNode(ctx, n.UUID)
	if err != nil {
		return err
	}
	if cur.ProvisionState != string(states.InspectWait) {
		return &rpc.RemoteError{Class: "NotFound", Code: http.StatusNotFound, Message: "Resource could not be found."}
	}
	cur.ProvisionState = string(states.Inspecting)
	return f.store.Save(ctx, cur)
}

// DoNodeRescue refuses as a conductor whose nodes' rescue interface is
// no-rescue (every hardware type's only one): InstanceRescueFailure.
func (f *fakeConductor) DoNodeRescue(_ context.Context, n *objects.Node, _ string) error {
	f.record("rescue " + n.UUID)
	return &rpc.RemoteError{Class: "InstanceRescueFailure", Code: http.StatusBadRequest,
		Message: fmt.Sprintf("Failed to rescue instance None for node %s: Validation failed: Driver %s does not support rescue (disabled or not implemented).", n.UUID, n.Driver)}
}

// DoNodeUnrescue refuses as DoNodeRescue does.
func (f *fakeConductor) DoNodeUnrescue(_ context.Context, n *objects.Node) error {
	f.record("unrescue " + n.UUID)
	return &rpc.RemoteError{Class: "InstanceUnrescueFailure", Code: http.StatusBadRequest,
		Message: fmt.Sprintf("Failed to unrescue instance None for node %s: Validation failed: Driver %s does not support rescue (disabled or not implemented).", n.UUID, n.Driver)}
}

// AddNodeTraits and RemoveNodeTraits write the store directly; the
// conductor's own handlers are tested through withRealConductor.
func (f *fakeConductor) AddNodeTraits(ctx context.Context, n *objects.Node, traits []string, replace bool) error {
	f.record("add_node_traits")
	if err := f.locked(n); err != nil {
		return err
	}
	if replace {
		return f.store.SetNodeTraits(ctx, n.ID, traits)
	}
	return f.store.AddNodeTraits(ctx, n.ID, traits)
}

func (f *fakeConductor) RemoveNodeTraits(ctx context.Context, n *objects.Node, traits []string) error {
	f.record("remove_node_traits")
	if err := f.locked(n); err != nil {
		return err
	}
	return f.store.RemoveNodeTraits(ctx, n.ID, traits)
}

// SetConsoleMode answers as a conductor whose nodes use no-console; the
// conductor's console handlers are tested through withRealConductor.
func (f *fakeConductor) SetConsoleMode(_ context.Context, n *objects.Node, enabled bool) error {
	f.record(fmt.Sprintf("set_console_mode %s %v", n.UUID, enabled))
	return &rpc.RemoteError{Class: "UnsupportedDriverExtension", Code: http.StatusBadRequest,
		Message: fmt.Sprintf("Driver %s does not support console (disabled or not implemented).", n.Driver)}
}

// GetConsoleInformation answers NodeConsoleNotEnabled, as for a node whose
// console is off.
func (f *fakeConductor) GetConsoleInformation(_ context.Context, n *objects.Node) (rpc.ConsoleInfo, error) {
	f.record("get_console_information " + n.UUID)
	return rpc.ConsoleInfo{}, &rpc.RemoteError{Class: "NodeConsoleNotEnabled", Code: http.StatusBadRequest,
		Message: fmt.Sprintf("Console access is not enabled on node %s", n.UUID)}
}
