package conductor

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/rivetmetal/rivet/core/conductor/agentclient"
	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/core/pyrepr"
	"github.com/rivetmetal/rivet/core/states"
	"github.com/rivetmetal/rivet/plugins"
)

// Cleaning through the agent, for nodes with the direct deploy, as
// Ironic's agent_base cleaning: the conductor boots the agent (as for a
// deploy) and waits in "clean wait"; on the agent's first heartbeat it asks
// the agent for its clean steps (clean.get_clean_steps). Automated cleaning
// runs those with a priority above 0, highest first, where [deploy]
// erase_devices_priority and erase_devices_metadata_priority override the
// agent's priorities of erase_devices and erase_devices_metadata; manual
// cleaning runs the steps given. Each step is clean.execute_clean_step,
// polled on heartbeats; a failed step leaves the node in "clean failed"
// with the agent's error. After the last step the node is powered off.

// driver_internal_info keys of agent cleaning.
const (
	diiCleanSteps     = "clean_steps"
	diiCleanStepIndex = "clean_step_index"
	diiCleanCommand   = "clean_agent_command"
	diiCleanManual    = "clean_manual"
	diiCleanVersion   = "clean_hardware_manager_version"
	// diiCleanDisableRamdisk marks manual cleaning without the agent
	// (API 1.70, Ironic's cleaning_disable_ramdisk).
	diiCleanDisableRamdisk = "cleaning_disable_ramdisk"
	cmdGetCleanSteps       = "clean.get_clean_steps"
	cmdExecuteClean        = "clean.execute_clean_step"
	defaultMetaErasure     = 99 // IPA's priority of erase_devices_metadata
)

// cleanKeys are the keys wiped when cleaning ends.
var cleanKeys = []string{diiCleanSteps, diiCleanStepIndex, diiCleanCommand, diiCleanManual, diiCleanVersion, diiCleanDisableRamdisk}

// agentCleanWork starts cleaning through the agent: the requested steps
// (manual) are kept, the agent booted, and the node waits in clean wait.
func (s *Service) agentCleanWork(ctx context.Context, t *Task, steps []plugins.CleanStep, manual bool) {
	n := t.Node
	noRamdisk := manual && cleaningWithoutRamdisk(n)
	dii := cloneMap(n.DriverInternalInfo)
	for _, k := range cleanKeys {
		delete(dii, k)
	}
	dii[diiCleanManual] = manual
	if manual {
		list := make([]any, len(steps))
		for i, st := range steps {
			list[i] = cleanStepMap(st)
		}
		dii[diiCleanSteps] = list
	}
	if noRamdisk {
		dii[diiCleanDisableRamdisk] = true
	}
	n.DriverInternalInfo = dii
	if noRamdisk {
		s.cleanWithoutRamdisk(ctx, t, steps)
		return
	}
	if _, err := s.stepBootAgent(ctx, t, DeployStep{}); err != nil {
		s.fail(ctx, t, fmt.Errorf("Failed to boot the agent for cleaning node %s: %w", n.UUID, err))
		return
	}
	s.cleanWait(ctx, t)
}

func cleanStepMap(st plugins.CleanStep) map[string]any {
	args := st.Args
	if args == nil {
		args = map[string]any{}
	}
	return map[string]any{"interface": string(st.Interface), "step": st.Step, "priority": st.Priority,
		"abortable": st.Abortable, "args": args}
}

// manualClean reports whether the node's cleaning is manual.
func manualClean(n *objects.Node) bool { b, _ := n.DriverInternalInfo[diiCleanManual].(bool); return b }

// cleanWait moves the node to clean wait (keeping manual cleaning's
// target) and saves.
func (s *Service) cleanWait(ctx context.Context, t *Task) {
	if err := fire(t.Node, states.Wait, ""); err != nil {
		s.fail(ctx, t, err)
		return
	}
	if manualClean(t.Node) {
		setState(t.Node, states.CleanWait, states.Manageable)
	}
	s.save(ctx, t)
}

// continueClean resumes agent cleaning after a heartbeat (background work
// under the heartbeat's lease).
func (s *Service) continueClean(ctx context.Context, t *Task) {
	n := t.Node
	tgt := agentTarget(n)
	if cmd, _ := n.DriverInternalInfo[diiCleanCommand].(string); cmd != "" {
		last, err := s.agent.Last(ctx, tgt, cmd)
		switch {
		case err != nil && errors.Is(err, agentclient.ErrUnreachable):
			t.log.Warn("agent unreachable while its clean step runs; waiting for the next heartbeat", "error", err)
			return
		case err != nil:
			s.fail(ctx, t, fmt.Errorf("Clean step failed on node %s: checking the agent's command: %w", n.UUID, err))
			return
		case last == nil:
			s.fail(ctx, t, fmt.Errorf("Clean step failed on node %s: the agent no longer reports its command (did it restart?)", n.UUID))
			return
		case last.Status == agentclient.StatusRunning:
			return
		case last.Failed():
			s.fail(ctx, t, fmt.Errorf("Agent returned error for clean step %v on node %s: %s", n.CleanStep["step"], n.UUID, last.ErrorText()))
			return
		}
	}
	steps, idx := storedCleanSteps(n)
	if _, ok := n.DriverInternalInfo[diiCleanVersion]; !ok {
		// The agent just booted: learn its clean steps.
		all, version, err := s.agentCleanSteps(ctx, t)
		if err != nil {
			s.fail(ctx, t, fmt.Errorf("Failed to get clean steps from the agent of node %s: %w", n.UUID, err))
			return
		}
		if manualClean(n) {
			for _, st := range steps {
				if st.Interface == plugins.InterfaceDeploy && !slices.ContainsFunc(all, func(a plugins.CleanStep) bool { return a.Step == st.Step }) {
					s.fail(ctx, t, fmt.Errorf("Clean step deploy.%s is not supported by the agent of node %s", st.Step, n.UUID))
					return
				}
			}
		} else {
			steps = s.automatedCleanSteps(all)
		}
		list := make([]any, len(steps))
		for i, st := range steps {
			list[i] = cleanStepMap(st)
		}
		dii := cloneMap(n.DriverInternalInfo)
		dii[diiCleanSteps], dii[diiCleanVersion] = list, version
		n.DriverInternalInfo = dii
		idx = -1
	}
	if err := fire(n, states.Resume, ""); err != nil {
		s.fail(ctx, t, err)
		return
	}
	if manualClean(n) {
		setState(n, states.Cleaning, states.Manageable)
	}
	s.runCleanSteps(ctx, t, steps, idx+1)
}

// runCleanSteps runs steps from from on the agent; a running step makes
// the node wait; after the last, the node is powered off and cleaning
// ends.
func (s *Service) runCleanSteps(ctx context.Context, t *Task, steps []plugins.CleanStep, from int) {
	n := t.Node
	ports, err := s.agentPorts(ctx, n)
	if err != nil {
		s.fail(ctx, t, err)
		return
	}
	for i := from; i < len(steps); i++ {
		st := steps[i]
		dii := cloneMap(n.DriverInternalInfo)
		dii[diiCleanStepIndex] = i
		delete(dii, diiCleanCommand)
		n.DriverInternalInfo = dii
		n.CleanStep = cleanStepMap(st)
		if !s.save(ctx, t) {
			return
		}
		t.log.Info("running clean step on the agent", "step", st.Step, "priority", st.Priority)
		if st.Interface == plugins.InterfaceRAID {
			if err := s.runRAIDStep(ctx, t, st); err != nil {
				if !t.Lost() {
					s.fail(ctx, t, fmt.Errorf("Node %s failed clean step raid.%s: %w", n.UUID, st.Step, err))
				}
				return
			}
			continue
		}
		if st.Interface != plugins.InterfaceDeploy {
			// A step of the driver's interfaces: the plugin runs it.
			if !s.step(ctx, t, "execute clean step "+st.Step, func(ctx context.Context, hw Hardware, pn plugins.Node) error {
				return s.executeCleanStep(ctx, n, hw, pn, st)
			}) {
				return
			}
			s.afterStep(ctx, t, st)
			continue
		}
		res, err := s.agent.Execute(ctx, agentTarget(n), cmdExecuteClean, map[string]any{
			"step": cleanStepMap(st), "node": agentNode(n), "ports": ports, "clean_version": n.DriverInternalInfo[diiCleanVersion],
		}, false)
		if err != nil {
			s.fail(ctx, t, fmt.Errorf("Agent returned error for clean step %s on node %s: %w", st.Step, n.UUID, err))
			return
		}
		if res.Status == agentclient.StatusRunning {
			dii := cloneMap(n.DriverInternalInfo)
			dii[diiCleanCommand] = cmdExecuteClean
			n.DriverInternalInfo = dii
			s.cleanWait(ctx, t)
			return
		}
	}
	if !cleaningWithoutRamdisk(n) { // no agent booted: nothing to power off
		if err := s.withHardware(ctx, t, "power off the agent", func(ctx context.Context, hw Hardware, pn plugins.Node) error {
			return hw.SetPowerState(ctx, pn, plugins.PowerOff)
		}); err != nil {
			s.fail(ctx, t, err)
			return
		}
		n.PowerState = ptr(string(plugins.PowerOff))
	}
	s.updateCache(ctx, t) // and as it ends
	manual := manualClean(n)
	n.CleanStep = map[string]any{}
	dii := cloneMap(n.DriverInternalInfo)
	for _, k := range cleanKeys {
		delete(dii, k)
	}
	n.DriverInternalInfo = dii
	if manual {
		s.finish(ctx, t, states.Manage, nil)
		return
	}
	s.finish(ctx, t, states.Done, nil)
}

// storedCleanSteps reads the clean plan back.
func storedCleanSteps(n *objects.Node) ([]plugins.CleanStep, int) {
	raw, _ := n.DriverInternalInfo[diiCleanSteps].([]any)
	out := make([]plugins.CleanStep, 0, len(raw))
	for _, r := range raw {
		m, _ := r.(map[string]any)
		st := plugins.CleanStep{}
		iface, _ := m["interface"].(string)
		st.Interface = plugins.Interface(iface)
		st.Step, _ = m["step"].(string)
		st.Priority, _ = toInt(m["priority"])
		st.Abortable, _ = m["abortable"].(bool)
		st.Args, _ = m["args"].(map[string]any)
		out = append(out, st)
	}
	idx, ok := toInt(n.DriverInternalInfo[diiCleanStepIndex])
	if !ok {
		idx = -1
	}
	return out, idx
}

// agentCleanSteps asks the agent for its clean steps: every hardware
// manager's, one per name (the highest priority), and the managers'
// versions.
func (s *Service) agentCleanSteps(ctx context.Context, t *Task) ([]plugins.CleanStep, any, error) {
	ports, err := s.agentPorts(ctx, t.Node)
	if err != nil {
		return nil, nil, err
	}
	res, err := s.agent.Run(ctx, agentTarget(t.Node), cmdGetCleanSteps, map[string]any{"node": agentNode(t.Node), "ports": ports})
	if err != nil {
		return nil, nil, err
	}
	byManager, _ := res.Result["clean_steps"].(map[string]any)
	best := map[string]plugins.CleanStep{}
	for _, list := range byManager {
		steps, _ := list.([]any)
		for _, raw := range steps {
			m, _ := raw.(map[string]any)
			name, _ := m["step"].(string)
			iface, _ := m["interface"].(string)
			prio, _ := toInt(m["priority"])
			abortable, _ := m["abortable"].(bool)
			if name == "" {
				continue
			}
			if cur, ok := best[name]; !ok || prio > cur.Priority {
				best[name] = plugins.CleanStep{Interface: plugins.Interface(iface), Step: name, Priority: prio, Abortable: abortable}
			}
		}
	}
	out := make([]plugins.CleanStep, 0, len(best))
	for _, st := range best {
		out = append(out, st)
	}
	slices.SortFunc(out, func(a, b plugins.CleanStep) int {
		if a.Priority != b.Priority {
			return b.Priority - a.Priority
		}
		if a.Step < b.Step {
			return -1
		}
		return 1
	})
	return out, res.Result["hardware_manager_version"], nil
}

// automatedCleanSteps picks automated cleaning's steps from the agent's:
// [deploy] erase_devices_priority and erase_devices_metadata_priority
// override the agent's priorities; steps of priority 0 are skipped.
func (s *Service) automatedCleanSteps(all []plugins.CleanStep) []plugins.CleanStep {
	var out []plugins.CleanStep
	for _, st := range all {
		switch st.Step {
		case "erase_devices":
			st.Priority = s.cfg.EraseDevicesPriority
		case "erase_devices_metadata":
			st.Priority = s.cfg.EraseDevicesMetadataPriority
		}
		if st.Priority > 0 {
			out = append(out, st)
		}
	}
	slices.SortStableFunc(out, func(a, b plugins.CleanStep) int { return b.Priority - a.Priority })
	return out
}

// AgentConfig tunes the conductor's agent client ([agent]).
type AgentConfig struct {
	CommandTimeout, PollInterval time.Duration
	MaxAttempts, PollAttempts    int
}

// newAgentClient is the agent client of c, with agentclient's defaults for
// what c leaves zero.
func newAgentClient(c AgentConfig) *agentclient.Client {
	out := agentclient.New()
	if c.CommandTimeout > 0 {
		out.CommandTimeout = c.CommandTimeout
	}
	if c.MaxAttempts > 0 {
		out.MaxAttempts = c.MaxAttempts
	}
	if c.PollInterval > 0 {
		out.PollInterval = c.PollInterval
	}
	if c.PollAttempts > 0 {
		out.PollAttempts = c.PollAttempts
	}
	return out
}

// cleaningWithoutRamdisk reports whether the node's manual cleaning runs
// without the agent (disable_ramdisk, API 1.70).
func cleaningWithoutRamdisk(n *objects.Node) bool {
	b, _ := n.DriverInternalInfo[diiCleanDisableRamdisk].(bool)
	return b
}

// cleanWithoutRamdisk runs manual clean steps without booting the agent
// (disable_ramdisk, API 1.70), as Ironic: only steps that do not require
// the ramdisk may run. Those are the steps of the driver's own interfaces
// (bios, management, power, raid), which its plugin runs out of band; the
// steps of the deploy interface are the agent's and require it, so a
// request naming one fails cleaning before anything runs, with Ironic's
// "Cannot clean node …: clean step … requires booting a ramdisk". The
// node is not powered off afterwards (no agent was booted).
func (s *Service) cleanWithoutRamdisk(ctx context.Context, t *Task, steps []plugins.CleanStep) {
	n := t.Node
	var errs []string
	for _, st := range steps {
		if st.Interface == plugins.InterfaceDeploy {
			errs = append(errs, fmt.Sprintf("clean step %s requires booting a ramdisk", pyStepRepr(st)))
		}
	}
	if len(errs) > 0 {
		s.fail(ctx, t, fmt.Errorf("Cannot clean node %s: %s", n.UUID, strings.Join(errs, "; ")))
		return
	}
	t.log.Info("manual cleaning without the agent (disable_ramdisk)", "steps", len(steps))
	s.runCleanSteps(ctx, t, steps, 0)
}

// pyStepRepr renders a requested step as Ironic's messages print it (a
// Python dict).
func pyStepRepr(st plugins.CleanStep) string {
	args := make([]string, 0, len(st.Args))
	for _, k := range slices.Sorted(maps.Keys(st.Args)) {
		args = append(args, pyrepr.String(k)+": "+pyrepr.Value(st.Args[k]))
	}
	return fmt.Sprintf("{'interface': %s, 'step': %s, 'args': {%s}}", pyrepr.String(string(st.Interface)), pyrepr.String(st.Step), strings.Join(args, ", "))
}
