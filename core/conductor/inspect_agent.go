package conductor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/rivetmetal/rivet/core/agenttoken"
	"github.com/rivetmetal/rivet/core/catalog"
	"github.com/rivetmetal/rivet/core/clock"
	"github.com/rivetmetal/rivet/core/conductor/bootserver"
	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/core/rpc"
	"github.com/rivetmetal/rivet/core/states"
	"github.com/rivetmetal/rivet/db"
	"github.com/rivetmetal/rivet/plugins"
	"github.com/rivetmetal/rivet/plugins/redact"
)

// LookupBMCAddressesKey is the driver_internal_info key holding the BMC
// addresses an agent's inspection data may name the node by (Ironic's
// lookup_bmc_addresses), cached when in-band inspection starts.
const LookupBMCAddressesKey = "lookup_bmc_addresses"

// MaxStoredInspectionData bounds the JSON of the inventory plus plugin
// data stored per node (the agent's logs are never stored).
const MaxStoredInspectionData = 1 << 20

// usesAgentInspect reports whether the node's inspect interface is the
// in-band "agent" one.
func (s *Service) usesAgentInspect(n *objects.Node) bool {
	impl, err := s.nodeInterface(n, catalog.Inspect)
	return err == nil && impl == catalog.AgentInspect
}

// agentInspectWork starts in-band inspection as Ironic's agent inspect
// interface with managed boot: the BMC addresses are cached for lookup,
// any earlier agent token is wiped, the node is powered off and booted
// into the agent ramdisk the node's driver_info names (deploy_iso, or
// deploy_kernel and deploy_ramdisk) the way the ramdisk deploy boots its
// image, and it waits in "inspect wait" for the agent's POST to
// /v1/continue_inspection.
func (s *Service) agentInspectWork(ctx context.Context, t *Task) {
	n := t.Node
	boot := *n
	boot.InstanceInfo = bootserver.AgentRamdisk(n.DriverInfo, s.cfg.Inspector.CallbackEndpointOverride)
	dii := agenttoken.Wipe(n.DriverInternalInfo)
	if addrs := bmcLookupAddresses(ctx, n.DriverInfo); len(addrs) > 0 {
		dii = cloneMap(dii)
		dii[LookupBMCAddressesKey] = addrs
	} else if _, ok := dii[LookupBMCAddressesKey]; ok {
		dii = cloneMap(dii)
		delete(dii, LookupBMCAddressesKey)
	}
	n.DriverInternalInfo = dii
	if !s.save(ctx, t) {
		return
	}
	if !s.step(ctx, t, "power off for inspection", func(ctx context.Context, hw Hardware, pn plugins.Node) error {
		return hw.SetPowerState(ctx, pn, plugins.PowerOff)
	}) {
		return
	}
	hw, err := s.hardware(n)
	if err == nil {
		err = s.driverCall(ctx, &boot, "boot the agent ramdisk for inspection", func(ctx context.Context, pn plugins.Node) error {
			if err := hw.PrepareDeploy(ctx, pn); err != nil {
				return err
			}
			return hw.Deploy(ctx, pn)
		})
	}
	if err != nil {
		s.fail(ctx, t, fmt.Errorf("unable to start inspection: %w", err))
		return
	}
	if t.Lost() {
		return
	}
	s.finish(ctx, t, states.Wait, func(n *objects.Node) { n.PowerState = ptr(string(plugins.PowerOn)) })
}

// validateAgentInspect is the inspect validation of the agent interface
// (Ironic's boot validate_inspection): the node's driver_info must name an
// agent ramdisk to boot, a network-booting node needs this conductor's
// iPXE server, and its driver_info must be complete.
func (s *Service) validateAgentInspect(n *objects.Node) rpc.InterfaceValidation {
	if len(bootserver.AgentRamdisk(n.DriverInfo, "")) == 0 {
		return notOK("Node %s: driver_info has no agent ramdisk to boot for inspection: set %s (virtual media) or %s and %s (network boot)",
			n.UUID, bootserver.InfoDeployISO, bootserver.InfoDeployKernel, bootserver.InfoDeployRamdisk)
	}
	if v := s.validateBootServer(n, catalog.Inspect); !v.Result {
		return v
	}
	return s.validateDriverInfo(n)
}

// bmcLookupAddresses are the addresses of the node's BMC as Ironic's
// _get_bmc_addresses finds them: every driver_info key ending in
// "_address", a URL reduced to its host, brackets stripped, each name
// resolved; loopback addresses are left out.
func bmcLookupAddresses(ctx context.Context, info map[string]any) []string {
	seen := map[string]bool{}
	var out []string
	add := func(a string) {
		if ip := net.ParseIP(a); (ip != nil && ip.IsLoopback()) || a == "" || seen[a] || a == "localhost" {
			return
		}
		seen[a] = true
		out = append(out, a)
	}
	for k, v := range info {
		addr, ok := v.(string)
		if !ok || !strings.HasSuffix(k, "_address") || addr == "" {
			continue
		}
		if strings.Contains(addr, "//") {
			u, err := url.Parse(addr)
			if err != nil {
				continue
			}
			addr = u.Hostname()
		}
		addr = strings.Trim(addr, "[]")
		if net.ParseIP(addr) == nil {
			rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			ips, err := net.DefaultResolver.LookupHost(rctx, addr)
			cancel()
			if err == nil {
				for _, ip := range ips {
					add(ip)
				}
			}
		}
		add(addr)
	}
	return out
}

// continueInspection is the RPC (1.5) Ironic's continue_inspection: a node
// in "inspect wait" resumes to "inspecting" before the call returns and the
// agent's data is processed in the background: the inspection hooks set
// properties and ports, the inventory and plugin data are stored, the node
// is powered off and becomes manageable. A node in any other state is
// refused with Ironic's NotFound, saying nothing more.
func (s *Service) continueInspection(ctx context.Context, p rpc.Params) (any, error) {
	var inventory, pluginData map[string]any
	if err := p.Decode("inventory", &inventory); err != nil {
		return nil, err
	}
	if err := p.Decode("plugin_data", &pluginData); err != nil {
		return nil, err
	}
	if inventory == nil {
		return nil, errInvalidParameter("inventory is required")
	}
	if pluginData == nil {
		pluginData = map[string]any{}
	}
	t, err := s.acquireParam(ctx, p, "continue inspection")
	if err != nil {
		return nil, err
	}
	discovered := false
	prepare := func() error {
		n := t.Node
		discovered = s.cfg.AutoDiscovery.Enabled && n.ProvisionState == string(states.Enroll)
		if n.ProvisionState != string(states.InspectWait) && !discovered {
			s.nodeLog(ctx, n).Error("refusing to process inspection data for a node in an invalid state", "provision_state", n.ProvisionState)
			return classed("NotFound", http.StatusNotFound, nil, "Resource could not be found.")
		}
		if !discovered {
			if err := fire(n, states.Resume, "resume"); err != nil {
				return err
			}
		}
		dii := cloneMap(n.DriverInternalInfo)
		dii["agent_last_heartbeat"] = clock.Now().Format(time.RFC3339)
		n.DriverInternalInfo = dii
		return t.Save(ctx)
	}
	return nil, s.startWork(ctx, t, prepare, func(ctx context.Context, t *Task) {
		if discovered {
			s.processDiscovery(ctx, t, inventory, pluginData)
			return
		}
		s.processInspection(ctx, t, inventory, pluginData)
	})
}

// processDiscovery is continue_inspection for a node in enroll (with
// [auto_discovery] enabled: one the API enrolled for data no node
// matched): the hooks and rules run and the data is stored as for an
// inspected node, then the node is powered off (best effort: a new node
// has no BMC credentials unless a rule set them) and stays in enroll. A
// failure stays in enroll too, with last_error (Ironic's
// provisioning_error_handler with ENROLL).
func (s *Service) processDiscovery(ctx context.Context, t *Task, inventory, pluginData map[string]any) {
	n := t.Node
	failed := func(err error) {
		n.LastError = ptr(fmt.Sprintf("Failed to finish inspection: %v", err))
		t.log.Warn("processing the data of a discovered node failed", "error", err)
		s.save(context.WithoutCancel(ctx), t)
	}
	if err := s.runInspectionHooks(ctx, t, inventory, pluginData); err != nil {
		failed(err)
		return
	}
	if err := s.applyInspectionRules(ctx, t, inventory, pluginData); err != nil {
		failed(err)
		return
	}
	delete(pluginData, "logs")
	inv, ierr := storableJSON(inventory)
	pd, err := storableJSON(pluginData)
	if ierr != nil || err != nil || len(inv)+len(pd) > MaxStoredInspectionData {
		failed(fmt.Errorf("the inventory and plugin data take %d bytes, more than the %d stored per node", len(inv)+len(pd), MaxStoredInspectionData))
		return
	}
	if err := s.db.ReplaceNodeInventory(ctx, n.ID, inv, pd); err != nil {
		failed(err)
		return
	}
	if hw, err := s.hardware(n); err == nil {
		if err := s.driverCall(ctx, n, "power off after discovery", func(ctx context.Context, pn plugins.Node) error {
			return hw.SetPowerState(ctx, pn, plugins.PowerOff)
		}); err != nil {
			t.log.Warn("power off after discovery failed", "error", err)
		} else {
			n.PowerState = ptr(string(plugins.PowerOff))
		}
	}
	now := clock.Now()
	n.InspectionFinishedAt = &now
	n.LastError = nil
	if s.save(ctx, t) {
		t.log.Info("successfully finished auto-discovery of node", "node", n.UUID)
	}
}

// processInspection runs the hooks, stores the data, powers the node off
// and finishes: manageable, or inspect failed with last_error.
func (s *Service) processInspection(ctx context.Context, t *Task, inventory, pluginData map[string]any) {
	n := t.Node
	if err := s.runInspectionHooks(ctx, t, inventory, pluginData); err != nil {
		s.inspectionFailed(ctx, t, fmt.Errorf("Failed to finish inspection: %w", err))
		return
	}
	if err := s.applyInspectionRules(ctx, t, inventory, pluginData); err != nil {
		s.inspectionFailed(ctx, t, fmt.Errorf("Failed to finish inspection: %w", err))
		return
	}
	delete(pluginData, "logs") // logs can be huge and are never stored
	inv, perr := storableJSON(inventory)
	pd, err := storableJSON(pluginData)
	if perr != nil || err != nil || len(inv)+len(pd) > MaxStoredInspectionData {
		s.inspectionFailed(ctx, t, fmt.Errorf("Failed to finish inspection: the inventory and plugin data take %d bytes, more than the %d stored per node",
			len(inv)+len(pd), MaxStoredInspectionData))
		return
	}
	prev, err := s.db.NodeInventoryOf(ctx, n.ID)
	if err != nil && !errors.Is(err, db.ErrNotFound) {
		s.inspectionFailed(ctx, t, fmt.Errorf("Failed to finish inspection: %w", err))
		return
	}
	if err := s.db.ReplaceNodeInventory(ctx, n.ID, inv, pd); err != nil {
		s.inspectionFailed(ctx, t, fmt.Errorf("Failed to finish inspection: %w", err))
		return
	}
	t.log.Info("inspection data stored", "bytes", len(inv)+len(pd), "replaced", prev != nil)
	if prev != nil {
		s.tasks.history.record(ctx, n, severityInfo, eventInspection,
			fmt.Sprintf("Inspection data of node %s replaced: the inventory of the inspection that finished at %s was overwritten",
				n.UUID, inspectedAt(n)), "", "")
	}
	if !s.step(ctx, t, "power off after inspection", func(ctx context.Context, hw Hardware, pn plugins.Node) error {
		return hw.SetPowerState(ctx, pn, plugins.PowerOff)
	}) {
		return
	}
	s.finish(ctx, t, states.Done, func(n *objects.Node) {
		now := clock.Now()
		n.InspectionFinishedAt = &now
		n.PowerState = ptr(string(plugins.PowerOff))
		n.DriverInternalInfo = withoutKey(n.DriverInternalInfo, LookupBMCAddressesKey)
	})
}

// inspectionFailed is Ironic's inspecting_error_handler: the node is
// powered off (best effort), its lookup addresses and token go, and it
// fails with err as last_error.
func (s *Service) inspectionFailed(ctx context.Context, t *Task, err error) {
	if hw, herr := s.hardware(t.Node); herr == nil {
		if perr := s.driverCall(ctx, t.Node, "power off after failed inspection", func(ctx context.Context, pn plugins.Node) error {
			return hw.SetPowerState(ctx, pn, plugins.PowerOff)
		}); perr != nil {
			t.log.Warn("power off after failed inspection failed", "error", perr)
		} else {
			t.Node.PowerState = ptr(string(plugins.PowerOff))
		}
	}
	t.Node.DriverInternalInfo = withoutKey(t.Node.DriverInternalInfo, LookupBMCAddressesKey)
	s.fail(ctx, t, err)
}

// abortAgentInspection is Ironic's abort_inspection for the agent
// interface: the node is powered off, its lookup addresses and agent token
// go, and it moves to "inspect failed" with "Inspection was aborted by
// request." as last_error.
func (s *Service) abortAgentInspection(ctx context.Context, t *Task) error {
	n := t.Node
	hw, err := s.hardware(n)
	if err != nil {
		return err
	}
	if err := s.driverCall(ctx, n, "power off to abort inspection", func(ctx context.Context, pn plugins.Node) error {
		return hw.SetPowerState(ctx, pn, plugins.PowerOff)
	}); err != nil {
		return fmt.Errorf("Failed to abort inspection: %w", err)
	}
	n.PowerState = ptr(string(plugins.PowerOff))
	n.DriverInternalInfo = withoutKey(agenttoken.Wipe(n.DriverInternalInfo), LookupBMCAddressesKey)
	if err := fire(n, states.Abort, "abort"); err != nil {
		return err
	}
	n.LastError = ptr("Inspection was aborted by request.")
	return t.Save(ctx)
}

// abortWait powers off a node whose inspection timed out and drops its
// lookup addresses and agent token.
func (s *Service) abortWait(ctx context.Context, t *Task) error {
	n := t.Node
	n.DriverInternalInfo = withoutKey(agenttoken.Wipe(n.DriverInternalInfo), LookupBMCAddressesKey)
	hw, err := s.hardware(n)
	if err != nil {
		return err
	}
	err = s.driverCall(ctx, n, "power off after inspection timeout", func(ctx context.Context, pn plugins.Node) error {
		return hw.SetPowerState(ctx, pn, plugins.PowerOff)
	})
	if err == nil {
		n.PowerState = ptr(string(plugins.PowerOff))
	}
	return err
}

// storableJSON encodes v for storage with every secret value masked
// (redact.Dict: passwords, tokens, URL credentials): an agent reports BMC
// addresses, never credentials, and none are ever stored.
func storableJSON(v map[string]any) (json.RawMessage, error) {
	return json.Marshal(redact.Dict(v))
}

// inspectedAt is when the node's previous inspection finished, or
// "an unknown time".
func inspectedAt(n *objects.Node) string {
	if n.InspectionFinishedAt == nil {
		return "an unknown time"
	}
	return n.InspectionFinishedAt.UTC().Format(time.RFC3339)
}

func withoutKey(m map[string]any, key string) map[string]any {
	if _, ok := m[key]; !ok {
		return m
	}
	out := cloneMap(m)
	delete(out, key)
	return out
}
