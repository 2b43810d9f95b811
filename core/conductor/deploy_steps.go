package conductor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/rivetmetal/rivet/core/conductor/agentclient"
	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/core/states"
	"github.com/rivetmetal/rivet/core/steps"
	"github.com/rivetmetal/rivet/plugins"
)

// The deploy-steps engine of the direct deploy, as Ironic's
// conductor/deployments.py runs deploy steps: the steps of a deploy are
// the deploy interface's standard steps, the user's steps (API 1.69
// deploy_steps) and those of deploy templates matching the instance's
// traits (core/steps), merged and ordered by priority,
// highest first; a step of priority 0 runs only when a user or template
// asks for it. The list and the index of the step running are kept in
// driver_internal_info (deploy_steps, deploy_step_index), so any conductor
// can continue a deploy. A step either finishes at once or says "wait":
// the node goes to "wait call-back" without a lease, and the agent's next
// heartbeat continues the deploy (Ironic's DEPLOYWAIT). The wait is bounded
// by [conductor] deploy_callback_timeout (the takeover periodic fails the
// node).

// driver_internal_info keys of the engine (Ironic's names where it has
// them).
const (
	diiDeploySteps     = "deploy_steps"
	diiDeployStepIndex = "deploy_step_index"
	// diiAgentCommand names the agent command a waiting step started
	// (polled on heartbeats); absent while waiting for the agent to boot.
	diiAgentCommand = "deploy_agent_command"
	// diiUserDeploySteps holds the deploy_steps the deploy request gave.
	diiUserDeploySteps = "user_deploy_steps"
)

// DeployStep is one deploy step: its interface, name, priority and args.
type DeployStep struct {
	Interface string         `json:"interface"`
	Step      string         `json:"step"`
	Priority  int            `json:"priority"`
	Args      map[string]any `json:"args"`
}

func (d DeployStep) asMap() map[string]any {
	args := d.Args
	if args == nil {
		args = map[string]any{}
	}
	return map[string]any{"interface": d.Interface, "step": d.Step, "priority": d.Priority, "args": args}
}

// deployTemplateSteps returns the steps of the deploy templates matching
// a node's instance traits (API 1.55; core/steps), in template order.
func (s *Service) deployTemplateSteps(ctx context.Context, n *objects.Node) ([]DeployStep, error) {
	m, err := steps.TemplateSteps(ctx, s.store, n)
	if err != nil {
		var invalid *steps.InvalidError
		if errors.As(err, &invalid) {
			return nil, errInvalidParameter("%s", invalid.Error())
		}
		return nil, err
	}
	out := make([]DeployStep, 0, len(m.Steps))
	for _, st := range m.Steps {
		out = append(out, DeployStep{Interface: st.Interface, Step: st.Step, Priority: st.Priority, Args: st.Args})
	}
	return out, nil
}

// stepResult is what running a step says.
type stepResult int

const (
	stepDone stepResult = iota // go on with the next step
	stepWait                   // wait for the agent's heartbeat
)

// stepFunc runs one standard step on t's node.
type stepFunc func(ctx context.Context, t *Task, st DeployStep) (stepResult, error)

// directSteps are the direct deploy's standard steps, by name, with their
// priorities (Ironic's AgentDeploy).
func (s *Service) directSteps() map[string]struct {
	priority int
	run      stepFunc
} {
	return map[string]struct {
		priority int
		run      stepFunc
	}{
		"deploy":                {100, s.stepBootAgent},
		"write_image":           {80, s.stepWriteImage},
		"prepare_instance_boot": {60, s.stepPrepareInstanceBoot},
		"tear_down_agent":       {40, s.stepTearDownAgent},
		"boot_instance":         {20, s.stepBootInstance},
	}
}

// parseDeploySteps checks user deploy steps (API 1.69): each names an
// interface, a step and a priority (an integer >= 0); args is optional.
func parseDeploySteps(raw []map[string]any) ([]DeployStep, error) {
	out := make([]DeployStep, 0, len(raw))
	for i, st := range raw {
		iface, _ := st["interface"].(string)
		name, _ := st["step"].(string)
		if iface == "" || name == "" {
			return nil, errInvalidParameter("deploy_steps[%d]: each deploy step needs an \"interface\" and a \"step\"", i)
		}
		prio, ok := toInt(st["priority"])
		if !ok || prio < 0 {
			return nil, errInvalidParameter("deploy_steps[%d]: each deploy step needs a \"priority\", an integer >= 0", i)
		}
		args, _ := st["args"].(map[string]any)
		out = append(out, DeployStep{Interface: iface, Step: name, Priority: prio, Args: args})
	}
	return out, nil
}

// planDeploy builds the ordered steps of a deploy: the standard steps with
// their priorities, overridden (priority, args) by template then user
// steps of the same interface and name; other requested steps are added;
// steps of priority 0 are dropped; highest priority first, ties in the
// order given. A requested step the conductor cannot run is an error
// before anything starts.
func (s *Service) planDeploy(ctx context.Context, n *objects.Node, user []DeployStep) ([]DeployStep, error) {
	std := s.directSteps()
	var plan []DeployStep
	for name, d := range std {
		plan = append(plan, DeployStep{Interface: "deploy", Step: name, Priority: d.priority})
	}
	tmpl, err := s.deployTemplateSteps(ctx, n)
	if err != nil {
		return nil, err
	}
	for _, req := range append(tmpl, user...) {
		if req.Interface == "raid" {
			// The raid interface's deploy steps (apply_configuration,
			// delete_configuration) are the conductor's (raid.go).
			if _, err := matchStep(n, s.raidSteps(n), plugins.CleanStep{Interface: plugins.InterfaceRAID, Step: req.Step}, plugins.PhaseDeploy); err != nil {
				return nil, errInvalidParameter("Deploy step raid.%s is not supported by node %s: %v", req.Step, n.UUID, err)
			}
			plan = append(plan, req)
			continue
		}
		if req.Interface != "deploy" {
			return nil, errInvalidParameter("Deploy step %s.%s is not supported: the direct deploy runs steps of the deploy and raid interfaces only", req.Interface, req.Step)
		}
		if _, ok := std[req.Step]; !ok && !agentDeployStep(req.Step) {
			return nil, errInvalidParameter("Deploy step deploy.%s is not supported by node %s", req.Step, n.UUID)
		}
		i := slices.IndexFunc(plan, func(p DeployStep) bool { return p.Interface == req.Interface && p.Step == req.Step })
		if i >= 0 {
			plan[i] = req
		} else {
			plan = append(plan, req)
		}
	}
	plan = slices.DeleteFunc(plan, func(p DeployStep) bool { return p.Priority <= 0 })
	slices.SortStableFunc(plan, func(a, b DeployStep) int {
		if a.Priority != b.Priority {
			return b.Priority - a.Priority
		}
		return 0
	})
	return plan, nil
}

// startDeploySteps records the plan and runs it from the first step.
func (s *Service) startDeploySteps(ctx context.Context, t *Task, plan []DeployStep) {
	raw := make([]any, len(plan))
	for i, st := range plan {
		raw[i] = st.asMap()
	}
	dii := cloneMap(t.Node.DriverInternalInfo)
	dii[diiDeploySteps] = raw
	delete(dii, diiAgentCommand)
	t.Node.DriverInternalInfo = dii
	s.runDeploySteps(ctx, t, 0)
}

// storedSteps reads the plan back from driver_internal_info.
func storedSteps(n *objects.Node) ([]DeployStep, int) {
	raw, _ := n.DriverInternalInfo[diiDeploySteps].([]any)
	out := make([]DeployStep, 0, len(raw))
	for _, r := range raw {
		m, _ := r.(map[string]any)
		st := DeployStep{}
		st.Interface, _ = m["interface"].(string)
		st.Step, _ = m["step"].(string)
		st.Priority, _ = toInt(m["priority"])
		st.Args, _ = m["args"].(map[string]any)
		out = append(out, st)
	}
	idx, ok := toInt(n.DriverInternalInfo[diiDeployStepIndex])
	if !ok {
		idx = -1
	}
	return out, idx
}

// runDeploySteps runs the plan from step from: each step is recorded
// before it runs; a step that waits leaves the node in wait call-back; a
// failure fails the deploy with the step named; after the last, the node
// is active.
func (s *Service) runDeploySteps(ctx context.Context, t *Task, from int) {
	steps, _ := storedSteps(t.Node)
	std := s.directSteps()
	for i := from; i < len(steps); i++ {
		st := steps[i]
		dii := cloneMap(t.Node.DriverInternalInfo)
		dii[diiDeployStepIndex] = i
		delete(dii, diiAgentCommand)
		t.Node.DriverInternalInfo = dii
		t.Node.DeployStep = st.asMap() // API 1.44's deploy_step: the step running
		if !s.save(ctx, t) {
			return
		}
		t.log.Info("running deploy step", "step", st.Step, "priority", st.Priority)
		run := s.stepOnAgent
		if d, ok := std[st.Step]; ok && st.Interface == "deploy" {
			run = d.run
		}
		if st.Interface == "raid" {
			run = func(ctx context.Context, t *Task, st DeployStep) (stepResult, error) {
				return stepDone, s.runRAIDStep(ctx, t, plugins.CleanStep{Interface: plugins.InterfaceRAID, Step: st.Step, Args: st.Args})
			}
		}
		res, err := run(ctx, t, st)
		if t.Lost() {
			return
		}
		if err != nil {
			s.fail(ctx, t, fmt.Errorf("Deploy step %s.%s failed on node %s: %w", st.Interface, st.Step, t.Node.UUID, err))
			return
		}
		if res == stepWait {
			s.finish(ctx, t, states.Wait, nil)
			return
		}
	}
	s.finish(ctx, t, states.Done, func(n *objects.Node) {
		s.deployed(n)
		wipeDeployInfo(n)
	})
}

// wipeDeployInfo drops the engine's bookkeeping and the node's deploy_step
// (Ironic's wipe_deploy_internal_info), when a deploy ends.
func wipeDeployInfo(n *objects.Node) {
	dii := cloneMap(n.DriverInternalInfo)
	for _, k := range []string{diiDeploySteps, diiDeployStepIndex, diiAgentCommand, diiUserDeploySteps} {
		delete(dii, k)
	}
	n.DriverInternalInfo = dii
	n.DeployStep = map[string]any{}
}

// continueDeploy resumes a direct deploy waiting in wait call-back after
// an agent heartbeat, under t's lease (background work): when the step
// waited for an agent command, the command's status decides (still
// running: keep waiting; failed: the deploy fails with the agent's error);
// otherwise the agent has booted and the next step runs.
func (s *Service) continueDeploy(ctx context.Context, t *Task) {
	n := t.Node
	_, idx := storedSteps(n)
	if cmd, _ := n.DriverInternalInfo[diiAgentCommand].(string); cmd != "" {
		last, err := s.agent.Last(ctx, agentTarget(n), cmd)
		switch {
		case err != nil && errors.Is(err, agentclient.ErrUnreachable):
			t.log.Warn("agent unreachable while its command runs; waiting for the next heartbeat", "command", cmd, "error", err)
			return
		case err != nil:
			s.fail(ctx, t, fmt.Errorf("Deploy step failed on node %s: checking agent command %s: %w", n.UUID, cmd, err))
			return
		case last == nil:
			s.fail(ctx, t, fmt.Errorf("Deploy step failed on node %s: the agent no longer reports command %s (did it restart?)", n.UUID, cmd))
			return
		case last.Status == agentclient.StatusRunning:
			return // still running: the next heartbeat checks again
		case last.Failed():
			steps, _ := storedSteps(n)
			name := cmd
			if idx >= 0 && idx < len(steps) {
				name = "deploy." + steps[idx].Step
			}
			s.fail(ctx, t, fmt.Errorf("Deploy step %s failed on node %s: %s", name, n.UUID, last.ErrorText()))
			return
		}
	}
	if abortAfter, _ := n.DeployStep["abort_after"].(bool); abortAfter {
		// An abort (API 1.110) came while the step ran: it is done now.
		s.abortDeploy(ctx, t, states.Fail)
		return
	}
	if err := fire(n, states.Resume, "resume"); err != nil {
		s.fail(ctx, t, err)
		return
	}
	s.runDeploySteps(ctx, t, idx+1)
}

// directDeployWork plans a direct deploy's steps (the user's, given with
// the deploy request, were kept in driver_internal_info) and runs them.
func (s *Service) directDeployWork(ctx context.Context, t *Task) {
	var user []DeployStep
	if raw, ok := t.Node.DriverInternalInfo[diiUserDeploySteps].([]any); ok {
		maps := make([]map[string]any, 0, len(raw))
		for _, r := range raw {
			m, _ := r.(map[string]any)
			maps = append(maps, m)
		}
		var err error
		if user, err = parseDeploySteps(maps); err != nil {
			s.fail(ctx, t, err)
			return
		}
	}
	plan, err := s.planDeploy(ctx, t.Node, user)
	if err != nil {
		s.fail(ctx, t, err)
		return
	}
	s.startDeploySteps(ctx, t, plan)
}

// prepareDeploySteps checks a deploy request's steps before the deploy
// starts (a step the deploy cannot run is InvalidParameterValue, 400, and
// nothing changes) and keeps them in driver_internal_info for the deploy.
// Only the direct deploy runs steps.
func (s *Service) prepareDeploySteps(ctx context.Context, n *objects.Node, raw []map[string]any, user []DeployStep) error {
	dii := cloneMap(n.DriverInternalInfo)
	for _, k := range []string{diiUserDeploySteps, diiDeploySteps, diiDeployStepIndex, diiAgentCommand} {
		delete(dii, k)
	}
	if !s.isDirect(n) {
		if len(user) > 0 {
			return errInvalidParameter("Node %s: deploy_steps are run only by the direct deploy interface", n.UUID)
		}
		n.DriverInternalInfo = dii
		return nil
	}
	if _, err := s.planDeploy(ctx, n, user); err != nil {
		return err
	}
	if len(raw) > 0 {
		list := make([]any, len(raw))
		for i, r := range raw {
			list[i] = r
		}
		dii[diiUserDeploySteps] = list
	}
	n.DriverInternalInfo = dii
	return nil
}

// toInt reads an integer from a JSON-decoded value (a float64, a
// json.Number from the database, or an int set in memory).
func toInt(v any) (int, bool) {
	switch x := v.(type) {
	case int:
		return x, true
	case int64:
		return int(x), true
	case float64:
		return int(x), float64(int(x)) == x
	case json.Number:
		i, err := x.Int64()
		return int(i), err == nil
	}
	return 0, false
}
