package conductor

import (
	"context"
	"errors"
	"log/slog"

	"github.com/rivetmetal/rivet/core/agenttoken"
	"github.com/rivetmetal/rivet/core/clock"
	"github.com/rivetmetal/rivet/core/conductor/workers"
	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/core/rpc"
	"github.com/rivetmetal/rivet/core/states"
)

// registerHandlers serves every method of rpc.ConductorMethods(); a test
// checks none is missing.
func (s *Service) registerHandlers() {
	for name, h := range map[string]rpc.HandlerFunc{
		"create_node":                      s.createNode,
		"update_node":                      s.updateNode,
		"destroy_node":                     s.destroyNode,
		"change_node_power_state":          s.changeNodePowerState,
		"get_boot_device":                  s.getBootDevice,
		"set_boot_device":                  s.setBootDevice,
		"get_supported_boot_devices":       s.getSupportedBootDevices,
		"do_node_deploy":                   s.doNodeDeploy,
		"do_node_tear_down":                s.doNodeTearDown,
		"do_node_clean":                    s.doNodeClean,
		"do_provisioning_action":           s.doProvisioningAction,
		"inspect_hardware":                 s.inspectHardware,
		"validate_driver_interfaces":       s.validateDriverInterfaces,
		"get_node_vendor_passthru_methods": s.getVendorPassthruMethods,
		"vendor_passthru":                  s.vendorPassthru,
		"get_driver_properties":            s.getDriverProperties,
		"create_port":                      s.createPort,
		"update_port":                      s.updatePort,
		"destroy_port":                     s.destroyPort,
		"update_portgroup":                 s.updatePortgroup,
		"destroy_portgroup":                s.destroyPortgroup,
		"heartbeat":                        s.agentHeartbeat,
		"get_node_with_token":              s.getNodeWithToken,
		"continue_inspection":              s.continueInspection,
		"vif_list":                         s.vifList,
		"vif_attach":                       s.vifAttach,
		"vif_detach":                       s.vifDetach,
		"inject_nmi":                       s.injectNMI,
		"update_volume_connector":          s.updateVolumeConnector,
		"destroy_volume_connector":         s.destroyVolumeConnector,
		"update_volume_target":             s.updateVolumeTarget,
		"destroy_volume_target":            s.destroyVolumeTarget,
		"do_node_rescue":                   s.doNodeRescue,
		"do_node_unrescue":                 s.doNodeUnrescue,
		"add_node_traits":                  s.addNodeTraits,
		"remove_node_traits":               s.removeNodeTraits,
		"create_allocation":                s.createAllocation,
		"destroy_allocation":               s.destroyAllocation,
		"do_node_service":                  s.doNodeService,
		"change_node_boot_mode":            s.changeNodeBootMode,
		"change_node_secure_boot":          s.changeNodeSecureBoot,
		"get_supported_indicators":         s.getSupportedIndicators,
		"get_indicator_state":              s.getIndicatorState,
		"set_indicator_state":              s.setIndicatorState,
		"get_virtual_media":                s.getVirtualMedia,
		"attach_virtual_media":             s.attachVirtualMedia,
		"detach_virtual_media":             s.detachVirtualMedia,
		"set_console_mode":                 s.setConsoleMode,
		"get_console_information":          s.getConsoleInformation,
	} {
		s.server.Handle(name, s.guard(name, h))
	}
}

// guard refuses new calls once shutdown began (the API retries them on a
// fresh ring) and gives a database that is down or full its class.
func (s *Service) guard(method string, h rpc.HandlerFunc) rpc.HandlerFunc {
	return func(ctx context.Context, p rpc.Params) (any, error) {
		if s.refusing.Load() {
			return nil, errShuttingDown(s.cfg.Hostname)
		}
		v, err := h(ctx, p)
		if err != nil {
			err = s.databaseError(method, err)
		}
		return v, err
	}
}

// nodeLog scopes a logger to a node and the request.
func (s *Service) nodeLog(ctx context.Context, n *objects.Node) *slog.Logger {
	return s.log.With("node", n.UUID, "request_id", rpc.RequestID(ctx))
}

// nodeID decodes the node_id argument.
func nodeID(p rpc.Params) (string, error) {
	id, err := p.String("node_id")
	if err == nil && id == "" {
		err = errInvalidParameter("node_id must not be empty")
	}
	return id, err
}

// acquireParam takes the lease on the node named by node_id.
func (s *Service) acquireParam(ctx context.Context, p rpc.Params, purpose string) (*Task, error) {
	id, err := nodeID(p)
	if err != nil {
		return nil, err
	}
	return s.tasks.Acquire(ctx, id, purpose)
}

// startWork reserves an API worker, then runs prepare (which validates,
// changes the node's state and saves it) and, if it succeeds, work in the
// background under t's lease, released when work returns. Without a free
// worker nothing changes and the caller gets NoFreeConductorWorker (503).
func (s *Service) startWork(ctx context.Context, t *Task, prepare func() error, work func(ctx context.Context, t *Task)) error {
	start := make(chan bool, 1)
	err := s.pool.TryAPI(func() {
		if !<-start {
			return
		}
		wctx, cancel := s.workContext(ctx)
		defer cancel()
		defer t.Release(wctx)
		work(wctx, t)
	})
	if err != nil {
		t.Release(ctx)
		if errors.Is(err, workers.ErrClosed) {
			return errShuttingDown(s.cfg.Hostname)
		}
		return err
	}
	if err := prepare(); err != nil {
		start <- false
		t.Release(ctx)
		return err
	}
	start <- true
	return nil
}

// withLease runs fn under t's lease and releases it.
func withLease[T any](ctx context.Context, t *Task, fn func() (T, error)) (T, error) {
	defer t.Release(ctx)
	return fn()
}

// setState moves n to st with target (nil for ""). An agent token lives
// only while the node stays among the states that expect an agent: one
// issued for a deploy, clean or inspection is wiped when it ends (or
// fails), and every new one starts without.
func setState(n *objects.Node, st, target states.State) {
	if !states.ExpectsAgent(st) || !states.ExpectsAgent(states.State(n.ProvisionState)) {
		n.DriverInternalInfo = agenttoken.Wipe(n.DriverInternalInfo)
	}
	n.ProvisionState = string(st)
	if target == "" {
		n.TargetProvisionState = nil
	} else {
		n.TargetProvisionState = ptr(string(target))
	}
	now := clock.Now()
	n.ProvisionUpdatedAt = &now
}

// fire applies event ev to n's provision state (core/states), setting the
// new state's target; it returns InvalidStateRequested (400) when ev is not
// possible from n's state.
func fire(n *objects.Node, ev states.Event, action string) error {
	next, err := states.Next(n.UUID, states.State(n.ProvisionState), ev)
	if err != nil {
		var ite *states.InvalidTransitionError
		if errors.As(err, &ite) && action != "" {
			ite.Action = action
		}
		return err
	}
	setState(n, next, states.Target(next))
	return nil
}
