package conductor

import (
	"context"
	"fmt"

	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/core/states"
	"github.com/rivetmetal/rivet/plugins"
)

// Aborting a deploy waiting in "wait call-back" (REST API 1.110), as
// Ironic's _do_abort: a deploy step runs on the agent (or the agent is
// booting: the step "deploy") and Ironic's deploy steps are not abortable,
// so the abort is recorded in the node's deploy_step (abort_after) and
// happens when the step ends, on the agent's next heartbeat; a node
// waiting without a step (a driver's own agent callback) is aborted at
// once. Either way the node ends in "deploy failed", powered off, its
// agent forgotten, with Ironic's last_error.

// deployAbortsLater reports whether an abort of n (in wait call-back)
// waits for the running deploy step to end: a step runs and is not
// abortable.
func (s *Service) deployAbortsLater(n *objects.Node) bool {
	abortable, _ := n.DeployStep["abortable"].(bool)
	return len(n.DeployStep) > 0 && !abortable
}

// abortDeployWait flags the running deploy step abort_after (once), under
// t's lease: the deploy is aborted when the step ends.
func (s *Service) abortDeployWait(ctx context.Context, t *Task) error {
	n := t.Node
	if after, _ := n.DeployStep["abort_after"].(bool); !after {
		step := cloneMap(n.DeployStep)
		step["abort_after"] = true
		n.DeployStep = step
		if err := t.Save(ctx); err != nil {
			return err
		}
	}
	s.nodeLog(ctx, n).Info("the running deploy step is not abortable; the deploy is aborted when it completes",
		"deploy_step", stepID(n.DeployStep))
	return nil
}

// abortDeploy ends a deploy by request: ev (abort from wait call-back, or
// fail after a step flagged abort_after) moves the node to deploy failed;
// the agent's URL is forgotten at once (nothing talks to it again), the
// node powered off (Ironic's deploy clean_up), and last_error says which
// step the deploy was aborted at.
func (s *Service) abortDeploy(ctx context.Context, t *Task, ev states.Event) {
	n := t.Node
	dii := cloneMap(n.DriverInternalInfo)
	delete(dii, "agent_url")
	n.DriverInternalInfo = dii
	if err := fire(n, ev, "abort"); err != nil {
		s.fail(ctx, t, err)
		return
	}
	msg := "By request, the deploy operation was aborted"
	if len(n.DeployStep) > 0 {
		msg += fmt.Sprintf(" during or after the completion of step \"%s\"", stepID(n.DeployStep))
	}
	if err := s.withHardware(ctx, t, "power off after the deploy was aborted", func(ctx context.Context, hw Hardware, pn plugins.Node) error {
		return hw.SetPowerState(ctx, pn, plugins.PowerOff)
	}); err != nil {
		// Ironic's message when the deploy interface's clean-up fails.
		n.LastError = ptr(fmt.Sprintf("Failed to clean up deploying after aborting the operation: %v", err))
		n.DeployStep = map[string]any{}
		s.save(context.WithoutCancel(ctx), t)
		return
	}
	n.PowerState = ptr(string(plugins.PowerOff))
	wipeDeployInfo(n)
	n.LastError = &msg
	if s.save(context.WithoutCancel(ctx), t) {
		t.log.Info("deploy aborted by request", "provision_state", n.ProvisionState)
	}
}

// stepID names a step as Ironic's step_id: "<interface>.<step>".
func stepID(step map[string]any) string {
	return fmt.Sprintf("%v.%v", step["interface"], step["step"])
}
