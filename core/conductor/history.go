package conductor

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/core/release"
	"github.com/rivetmetal/rivet/db"
)

// HistoryConfig is the node history's part of [conductor] (Ironic's
// options of the same names).
type HistoryConfig struct {
	// Enabled is [conductor] node_history: record events at all.
	Enabled bool
	// MaxEntries is [conductor] node_history_max_entries: the clean-up
	// keeps at most this many entries per node, the newest.
	MaxEntries int
	// CleanupInterval is [conductor] node_history_cleanup_interval; 0
	// disables the clean-up.
	CleanupInterval time.Duration
	// CleanupBatch is [conductor] node_history_cleanup_batch_count: the
	// most entries one clean-up deletes (0: no bound).
	CleanupBatch int
}

// Severities of history entries, as Ironic writes them.
const (
	severityInfo    = "INFO"
	severityError   = "ERROR"
	severityWarning = "WARNING"
)

// Event types of history entries.
const (
	eventProvisioning = "provisioning"
	eventPower        = "power"
	eventMonitoring   = "monitoring"
	eventTakeover     = "takeover"
	eventManagement   = "management"
	eventInspection   = "introspection"
)

// historyRecorder writes node history entries straight to the database:
// they are this conductor's own records, never sent over RPC. A failure to
// record is logged and never fails the operation recorded.
type historyRecorder struct {
	cfg    HistoryConfig
	store  *db.Store
	pinner *release.Pinner
	host   string
	log    *slog.Logger
}

// enabled reports whether entries are written now: not while the
// effective (pinned) release has no NodeHistory, which its services could
// not show.
func (h *historyRecorder) enabled() bool {
	if h == nil || !h.cfg.Enabled {
		return false
	}
	_, ok := h.pinner.Effective().ObjectVersion("NodeHistory")
	return ok
}

// record writes one entry about n, by the API user whose request caused
// it (user, "" for none); requestID, when set, ends the event text so the
// entry leads to the API's access log line and to both services' logs.
func (h *historyRecorder) record(ctx context.Context, n *objects.Node, severity, eventType, event, requestID, user string) {
	if !h.enabled() || event == "" {
		return
	}
	if requestID != "" {
		event += " (request " + requestID + ")"
	}
	obj, err := h.store.Registry().New("NodeHistory")
	if err != nil {
		h.log.Error("node history: no NodeHistory kind", "error", err)
		return
	}
	e := obj.(*objects.NodeHistory)
	e.UUID, e.NodeID = uuid.NewString(), n.ID
	e.Conductor, e.Severity, e.EventType, e.Event = &h.host, &severity, &eventType, &event
	if user != "" {
		e.UserName = &user
	}
	if err := h.store.Create(context.WithoutCancel(ctx), e); err != nil {
		h.log.Warn("node history: recording an event failed", "node", n.UUID, "event_type", eventType, "error", err)
	}
}

// nodeState is what Task.Save compares to find the events a save records.
type nodeState struct {
	provision, target, power, lastError string
}

func stateOf(n *objects.Node) nodeState {
	return nodeState{provision: n.ProvisionState, target: deref(n.TargetProvisionState),
		power: deref(n.PowerState), lastError: deref(n.LastError)}
}

// eventTypeFor names the activity a task's purpose belongs to.
func eventTypeFor(purpose string) string {
	switch {
	case purpose == "takeover":
		return eventTakeover
	case purpose == "power state sync":
		return eventMonitoring
	case strings.Contains(purpose, "power"):
		return eventPower
	case strings.Contains(purpose, "boot device"), strings.Contains(purpose, "nmi"):
		return eventManagement
	}
	return eventProvisioning
}

// recordSaved records what a successful save changed: a last_error newly
// set (ERROR), the provision state transition and the power state
// transition (INFO).
func (t *Task) recordSaved(ctx context.Context) {
	h := t.tm.history
	now := stateOf(t.Node)
	before := t.saved
	t.saved = now
	t.tm.metrics.provisionSaved(t.Node.UUID, before.provision, now.provision)
	if !h.enabled() {
		return
	}
	if now.lastError != "" && now.lastError != before.lastError {
		et := eventTypeFor(t.Purpose)
		if t.errorType != "" {
			et = t.errorType
		}
		h.record(ctx, t.Node, severityError, et, now.lastError, t.requestID, t.user)
	}
	if now.provision != before.provision {
		ev := fmt.Sprintf("Provision state changed from %q to %q", before.provision, now.provision)
		if now.target != "" {
			ev += fmt.Sprintf(", target %q", now.target)
		}
		h.record(ctx, t.Node, severityInfo, eventProvisioning, ev, t.requestID, t.user)
	}
	if now.power != before.power {
		h.record(ctx, t.Node, severityInfo, eventPower,
			fmt.Sprintf("Power state changed from %q to %q", noneIfEmpty(before.power), noneIfEmpty(now.power)), t.requestID, t.user)
	}
}

func noneIfEmpty(s string) string {
	if s == "" {
		return "None"
	}
	return s
}

// historyCleanupLoop prunes node history every node_history_cleanup_interval.
func (s *Service) historyCleanupLoop() {
	tick := time.NewTicker(s.cfg.History.CleanupInterval)
	defer tick.Stop()
	for {
		select {
		case <-s.stopBg:
			return
		case <-tick.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		s.pruneHistory(ctx)
		cancel()
	}
}

// pruneHistory keeps node_history_max_entries entries per node and drops
// the entries of deleted nodes, at most node_history_cleanup_batch_count
// per run. Every conductor runs it; deletes by id make overlapping runs
// harmless.
func (s *Service) pruneHistory(ctx context.Context) int {
	n, err := s.db.PruneNodeHistory(ctx, s.cfg.History.MaxEntries, s.cfg.History.CleanupBatch)
	if err != nil {
		s.log.Warn("node history clean-up failed", "deleted", n, "error", err)
		return n
	}
	if n > 0 {
		s.log.Info("node history cleaned up", "deleted", n)
	}
	return n
}
