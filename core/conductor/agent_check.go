package conductor

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/rivetmetal/rivet/core/conductor/agentclient"
	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/core/states"
	"github.com/rivetmetal/rivet/db"
)

// maxAgentChecks bounds the agent command checks in flight: each is one
// HTTP request to an agent, and a thousand agents heartbeating at once
// need not open a thousand connections at once.
const maxAgentChecks = 32

// agentFollowUps runs what the heartbeats heartbeatUnleased answered
// leave to do (followUp): one node at a time, a heartbeat that comes
// meanwhile making it run again with that heartbeat's node (a command
// may have ended in between).
type agentFollowUps struct {
	mu sync.Mutex
	// again holds, by node UUID, the nodes being followed up: the node
	// of a heartbeat that came meanwhile, or nil.
	again map[string]*objects.Node
	// checks holds a token per agent command check in flight.
	checks chan struct{}
	// running counts the follow-ups in flight; Stop waits for them once
	// stopped refuses new ones (a heartbeat answered while the conductor
	// stops leaves its follow-up to the next heartbeat, which another
	// conductor answers).
	running sync.WaitGroup
	stopped bool
}

// stop refuses new follow-ups and waits for those in flight, which end
// soon once stopBg is closed: an agent request in flight is cancelled and
// a resume finds the worker pool closed.
func (f *agentFollowUps) stop() {
	f.mu.Lock()
	f.stopped = true
	f.mu.Unlock()
	f.running.Wait()
}

func newAgentFollowUps() agentFollowUps {
	return agentFollowUps{again: map[string]*objects.Node{}, checks: make(chan struct{}, maxAgentChecks)}
}

// agentWait is what a node waiting for its agent waits for: the work to
// go on with once the agent's command ended (or, without one, once the
// agent booted).
type agentWait struct {
	// command is the agent command a waiting step started ("": none,
	// the agent just booted).
	command string
	resume  func(context.Context, *Task)
}

// waitsForAgent reports what n waits for when it is a direct deploy or
// clean waiting in "wait call-back" or "clean wait" for its agent,
// outside maintenance; the other heartbeats (a rescue, maintenance, a
// node that waits for nothing) take the node's lease.
func (s *Service) waitsForAgent(n *objects.Node) (agentWait, bool) {
	var w agentWait
	var key string
	switch states.State(n.ProvisionState) {
	case states.DeployWait:
		key, w.resume = diiAgentCommand, s.continueDeploy
	case states.CleanWait:
		key, w.resume = diiCleanCommand, s.continueClean
	default:
		return w, false
	}
	if n.Maintenance || !s.isDirect(n) {
		return w, false
	}
	w.command, _ = n.DriverInternalInfo[key].(string)
	return w, true
}

// followUp does in the background what n's heartbeat calls for.
func (s *Service) followUp(n *objects.Node) {
	f := &s.followUps
	f.mu.Lock()
	if f.stopped {
		f.mu.Unlock()
		return
	}
	if _, running := f.again[n.UUID]; running {
		f.again[n.UUID] = n
		f.mu.Unlock()
		return
	}
	f.again[n.UUID] = nil
	f.running.Add(1)
	f.mu.Unlock()
	go func() {
		defer f.running.Done()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go func() {
			select {
			case <-s.stopBg:
				cancel()
			case <-ctx.Done():
			}
		}()
		for n != nil {
			s.followUpOnce(ctx, n)
			f.mu.Lock()
			next := f.again[n.UUID]
			if next == nil {
				delete(f.again, n.UUID)
			} else {
				f.again[n.UUID] = nil
			}
			f.mu.Unlock()
			n = next
		}
	}()
}

// followUpOnce asks n's agent about the command n waits for, if any.
// While it runs, or while the agent cannot be reached, nothing changes:
// the next heartbeat asks again, as Ironic's heartbeats do. Otherwise
// (ended, failed, gone, or an answer that makes no sense) the waiting
// work goes on (resumeAfter), asking the agent again under the lease.
func (s *Service) followUpOnce(ctx context.Context, n *objects.Node) {
	w, ok := s.waitsForAgent(n)
	if !ok {
		return
	}
	if w.command != "" {
		select {
		case s.followUps.checks <- struct{}{}:
		case <-ctx.Done():
			return
		}
		last, err := s.agent.Last(ctx, agentTarget(n), w.command)
		<-s.followUps.checks
		switch {
		case ctx.Err() != nil:
			return
		case err == nil && last != nil && last.Status == agentclient.StatusRunning:
			return
		case errors.Is(err, agentclient.ErrUnreachable):
			s.log.Warn("agent unreachable while its command runs; waiting for the next heartbeat",
				"node", n.UUID, "command", w.command, "error", err)
			return
		}
	}
	s.resumeAfter(ctx, n.UUID, n.ProvisionState, w.command)
}

// resumeAfter runs the work a node waiting in state for its agent's
// command (or its agent's boot) waits for, under the node's lease, on a
// worker admitted as periodic work is: it waits for one rather than
// being refused (the agent was answered already), and never takes those
// kept for API requests. While the lease is held elsewhere it tries
// again, pausing longer each time, for up to a lease's duration; then
// the next heartbeat will. A node that moved on meanwhile is left alone.
func (s *Service) resumeAfter(ctx context.Context, uuid, state, command string) {
	deadline := time.Now().Add(s.cfg.LeaseDuration)
	for pause := 100 * time.Millisecond; ; pause = min(2*pause, 5*time.Second) {
		locked := make(chan bool, 1)
		if err := s.pool.Periodic(ctx, func() { locked <- s.resumeLeased(uuid, state, command) }); err != nil {
			return // shutting down
		}
		if !<-locked {
			return
		}
		if time.Now().After(deadline) {
			s.log.Warn("the node's agent is waited for but the node stayed locked; the next heartbeat goes on",
				"node", uuid, "command", command)
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(pause):
		}
	}
}

// resumeLeased takes the node's lease and resumes its work if it still
// waits in state for command; it reports whether the lease was held
// elsewhere.
func (s *Service) resumeLeased(uuid, state, command string) (locked bool) {
	ctx, cancel := s.workContext(context.Background())
	defer cancel()
	t, err := s.tasks.TryAcquire(ctx, uuid, "heartbeat")
	switch {
	case errors.Is(err, db.ErrNodeLocked):
		return true
	case err != nil:
		if !errors.Is(err, db.ErrNotFound) {
			s.log.Warn("cannot take the node's lease to resume after its agent", "node", uuid, "error", err)
		}
		return false
	}
	defer t.Release(ctx)
	if w, ok := s.waitsForAgent(t.Node); ok && t.Node.ProvisionState == state && w.command == command {
		w.resume(ctx, t)
	}
	return false
}
