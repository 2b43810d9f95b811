package upgrade

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// allocClass is the resource class of the nodes the load allocates.
const allocClass = "upgrade-alloc"

// newKinds is the load's use of the resources and verbs only the new
// release's API has (issue 30), started once every API serves the newest
// microversion unpinned: node traits set and listed, allocations created
// (a node allocated) and deleted, node history and BIOS settings read,
// and rows of every new object kind created through the API. Every
// acknowledged write is read back at the end (verifyNewKinds).
type newKinds struct {
	mu sync.Mutex
	// traits: node → traits acknowledged (PUT answered 204).
	traits map[string]map[string]bool
	// created: collection path → UUIDs acknowledged (201), never deleted.
	created map[string][]string
	// kept is an allocation created first and never deleted, on keptNode.
	kept, keptNode string

	traitWrites, allocCycles, historyReads, historyEntries, biosReads, biosSettings, firmwareReads, firmwareComponents, directCycles atomic.Int64
	// directReady: the direct deploy worker's node is set up (its
	// worker's own state).
	directReady bool
	// started: the workers running (startNewKinds only).
	started map[string]bool
}

// creations are the new kinds the load creates rows of, one per create:
// the collection and a body for the n-th create (unique names).
var creations = []struct {
	kind, since, path string
	body              func(n int, node string) map[string]any
}{
	{"DeployTemplate", "1.55", "/v1/deploy_templates", func(n int, _ string) map[string]any {
		return map[string]any{"name": fmt.Sprintf("CUSTOM_UPGRADE_TEMPLATE_%d", n), "extra": map[string]any{"n": n}, "steps": []any{
			map[string]any{"interface": "bios", "step": "apply_configuration", "priority": 150,
				"args": map[string]any{"settings": []any{map[string]any{"name": "LogicalProc", "value": "Enabled"}}}}}}
	}},
	{"Runbook", "1.92", "/v1/runbooks", func(n int, _ string) map[string]any {
		return map[string]any{"name": fmt.Sprintf("CUSTOM_UPGRADE_RUNBOOK_%d", n), "steps": []any{
			map[string]any{"interface": "bios", "step": "apply_configuration", "order": 1,
				"args": map[string]any{"settings": []any{map[string]any{"name": "LogicalProc", "value": "Enabled"}}}}}}
	}},
	{"VolumeConnector", "1.32", "/v1/volume/connectors", func(n int, node string) map[string]any {
		return map[string]any{"node_uuid": node, "type": "iqn", "connector_id": fmt.Sprintf("iqn.2026-11.org.rivet:upgrade-%d", n)}
	}},
	{"VolumeTarget", "1.32", "/v1/volume/targets", func(n int, node string) map[string]any {
		return map[string]any{"node_uuid": node, "volume_type": "iscsi", "boot_index": n, "volume_id": fmt.Sprintf("upgrade-vol-%d", n)}
	}},
	{"InspectionRule", "1.96", "/v1/inspection_rules", func(n int, _ string) map[string]any {
		return map[string]any{"description": fmt.Sprintf("upgrade rule %d", n), "priority": 100, "sensitive": false,
			"actions": []any{map[string]any{"op": "set-attribute", "args": map[string]any{"path": "/extra/upgrade_rule", "value": fmt.Sprint(n)}}}}
	}},
}

// Versions of the other new kinds' requests in the load.
const (
	traitsSince      = "1.37"
	allocationsSince = "1.52"
	historySince     = "1.78"
	biosSince        = "1.40"
	directSince      = "1.47" // automated_clean
)

// rowsMadeAt is the microversion at which the load creates rows of an
// object kind ("" when the services write them by themselves: node
// history once unpinned, conductors); ok is false for a kind the load
// has no way to create.
func rowsMadeAt(kind string) (since string, ok bool) {
	switch kind {
	case "Trait":
		return traitsSince, true
	case "Allocation":
		return allocationsSince, true
	case "NodeHistory", "Conductor", "Chassis", "Node", "Port", "Portgroup":
		return "", true
	}
	for _, k := range creations {
		if k.kind == kind {
			return k.since, true
		}
	}
	return "", false
}

// usesKind reports whether the worker that creates kind's rows has
// started (startNewKinds).
func (l *load) usesKind(kind string) bool {
	nk := l.nk.Load()
	if nk == nil {
		return false
	}
	worker := "creations"
	switch kind {
	case "Trait":
		worker = "traits"
	case "Allocation":
		worker = "allocations"
	}
	return nk.started[worker]
}

// serves reports whether the load's microversion has since.
func (l *load) serves(since string) bool {
	return mustVersion(since).Compare(mustVersion(l.c.ver())) <= 0
}

// maxCreates bounds the rows the load creates per kind.
const maxCreates = 12

// startNewKinds starts the workers of the new resources the load's
// microversion now serves (a chain run reaches them hop by hop; each
// worker starts once, and what it acknowledged stays to be read back).
func (l *load) startNewKinds(ctx context.Context) {
	nk := l.nk.Load()
	if nk == nil {
		nk = &newKinds{traits: map[string]map[string]bool{}, created: map[string][]string{}, started: map[string]bool{}}
		l.nk.Store(nk)
	}
	start := func(name, since string, fn func(context.Context)) {
		if nk.started[name] || !l.serves(since) {
			return
		}
		nk.started[name] = true
		l.wg.Go(func() {
			for !l.stop.Load() && ctx.Err() == nil {
				fn(ctx)
			}
		})
	}
	writers := slices.Concat(l.f.writer...)
	tseq, aseq, cseq := 0, 0, 0
	start("traits", traitsSince, func(ctx context.Context) { l.traitOnce(ctx, nk, writers[tseq%len(writers)], tseq/len(writers)); tseq++ })
	start("allocations", allocationsSince, func(ctx context.Context) { l.allocCycle(ctx, nk, aseq); aseq++ })
	start("creations", "1.32", func(ctx context.Context) { l.createOne(ctx, nk, cseq); cseq++ })
	start("reads", biosSince, func(ctx context.Context) { l.readNew(ctx, nk) })
	start("direct", directSince, func(ctx context.Context) { l.directCycle(ctx, nk) })
}

// traitOnce adds a trait to a node and, every third time, lists the
// node's traits: every trait acknowledged so far must be there.
func (l *load) traitOnce(ctx context.Context, nk *newKinds, node string, round int) {
	trait := fmt.Sprintf("CUSTOM_UPGRADE_%d", round%6)
	if _, err := l.c.call(ctx, http.MethodPut, "/v1/nodes/"+node+"/traits/"+trait, nil, nil, http.StatusNoContent); err == nil {
		nk.mu.Lock()
		if nk.traits[node] == nil {
			nk.traits[node] = map[string]bool{}
		}
		nk.traits[node][trait] = true
		nk.mu.Unlock()
		nk.traitWrites.Add(1)
	}
	if round%3 == 0 {
		if missing, err := nk.missingTraits(ctx, l.c, node); err == nil && len(missing) > 0 {
			l.c.rec.done(l.c.rec.step(), 0, fmt.Sprintf("GET /v1/nodes/%s/traits lacks acknowledged traits %v", node, missing))
		}
	}
	pace(ctx, 60*time.Millisecond)
}

// missingTraits lists node's acknowledged traits GET …/traits lacks.
func (nk *newKinds) missingTraits(ctx context.Context, c *client, node string) ([]string, error) {
	var list struct {
		Traits []string `json:"traits"`
	}
	if _, err := c.call(ctx, http.MethodGet, "/v1/nodes/"+node+"/traits", nil, &list, http.StatusOK); err != nil {
		return nil, err
	}
	nk.mu.Lock()
	defer nk.mu.Unlock()
	var missing []string
	for tr := range nk.traits[node] {
		if !slices.Contains(list.Traits, tr) {
			missing = append(missing, tr)
		}
	}
	slices.Sort(missing)
	return missing, nil
}

// apiAllocation is the part of an allocation the load reads.
type apiAllocation struct {
	UUID      string  `json:"uuid"`
	State     string  `json:"state"`
	NodeUUID  *string `json:"node_uuid"`
	LastError *string `json:"last_error"`
}

// allocCycle allocates a node of allocClass and, but for the first
// allocation (kept to the end), deletes the allocation: the node must
// show it while it exists, and the allocation must be gone after.
func (l *load) allocCycle(ctx context.Context, nk *newKinds, seq int) {
	c := l.c
	name := fmt.Sprintf("upgrade-%d", seq)
	var a apiAllocation
	if _, err := c.call(ctx, http.MethodPost, "/v1/allocations", map[string]any{"resource_class": allocClass, "name": name}, &a, http.StatusCreated); err != nil {
		pace(ctx, time.Second)
		return
	}
	node, err := waitAllocation(ctx, c, a.UUID)
	if err != nil {
		return
	}
	var n struct {
		AllocationUUID *string `json:"allocation_uuid"`
		InstanceUUID   *string `json:"instance_uuid"`
	}
	if _, err := c.call(ctx, http.MethodGet, "/v1/nodes/"+node, nil, &n, http.StatusOK); err != nil {
		return
	}
	if deref(n.AllocationUUID) != a.UUID || n.InstanceUUID == nil {
		_ = c.failed(fmt.Sprintf("allocation %s is active on node %s, whose allocation_uuid is %q (instance_uuid %q)",
			a.UUID, node, deref(n.AllocationUUID), deref(n.InstanceUUID)))
	}
	if seq == 0 {
		nk.mu.Lock()
		nk.kept, nk.keptNode = a.UUID, node
		nk.mu.Unlock()
		return
	}
	if _, err := c.call(ctx, http.MethodDelete, "/v1/allocations/"+a.UUID, nil, nil, http.StatusNoContent); err != nil {
		return
	}
	if _, err := c.call(ctx, http.MethodGet, "/v1/allocations/"+a.UUID, nil, nil, http.StatusNotFound); err == nil {
		nk.allocCycles.Add(1)
	}
	pace(ctx, 100*time.Millisecond)
}

// waitAllocation polls an allocation until it leaves "allocating" and
// returns its node; an allocation in error is a failure.
func waitAllocation(ctx context.Context, c *client, uuid string) (string, error) {
	deadline := time.Now().Add(time.Minute)
	for {
		var a apiAllocation
		if _, err := c.call(ctx, http.MethodGet, "/v1/allocations/"+uuid, nil, &a, http.StatusOK); err != nil {
			return "", err
		}
		switch {
		case a.State == "active" && a.NodeUUID != nil:
			return *a.NodeUUID, nil
		case a.State == "error":
			return "", c.failed(fmt.Sprintf("allocation %s failed: %s", uuid, deref(a.LastError)))
		case time.Now().After(deadline):
			return "", c.failed(fmt.Sprintf("allocation %s still %q after a minute", uuid, a.State))
		}
		pace(ctx, 200*time.Millisecond)
	}
}

// createOne creates a row of the next new kind (up to maxCreates each),
// on a node of the port worker's when the kind belongs to a node.
func (l *load) createOne(ctx context.Context, nk *newKinds, seq int) {
	k := creations[seq%len(creations)]
	n := seq / len(creations)
	if n >= maxCreates || !l.serves(k.since) {
		pace(ctx, time.Second)
		return
	}
	nodes := l.f.ports[0]
	var obj struct{ UUID string }
	if _, err := l.c.call(ctx, http.MethodPost, k.path, k.body(n, nodes[n%len(nodes)]), &obj, http.StatusCreated); err == nil {
		nk.mu.Lock()
		nk.created[k.path] = append(nk.created[k.path], obj.UUID)
		nk.mu.Unlock()
	}
	pace(ctx, 150*time.Millisecond)
}

// readNew is one read of the new resources: a node's history (the power
// and deploy workers' nodes record transitions), a redfish node's BIOS
// settings from rivet-sim, the allocations, deploy templates and
// conductors.
func (l *load) readNew(ctx context.Context, nk *newKinds) {
	c, f := l.c, l.f
	switch rand.IntN(5) {
	case 0:
		if !l.serves(historySince) {
			return
		}
		nodes := slices.Concat(slices.Concat(f.power...), slices.Concat(f.deploy...))
		var h struct {
			History []map[string]any `json:"history"`
		}
		if _, err := c.call(ctx, http.MethodGet, "/v1/nodes/"+nodes[rand.IntN(len(nodes))]+"/history", nil, &h, http.StatusOK); err == nil {
			nk.historyReads.Add(1)
			nk.historyEntries.Add(int64(len(h.History)))
		}
	case 1:
		redfish := f.power[rand.IntN(2)] // the redfish power workers' nodes
		var b struct {
			BIOS []map[string]any `json:"bios"`
		}
		if _, err := c.call(ctx, http.MethodGet, "/v1/nodes/"+redfish[rand.IntN(len(redfish))]+"/bios", nil, &b, http.StatusOK); err == nil {
			nk.biosReads.Add(1)
			nk.biosSettings.Add(int64(len(b.BIOS)))
		}
		if l.serves("1.86") {
			var fw struct {
				Firmware []map[string]any `json:"firmware"`
			}
			if _, err := c.call(ctx, http.MethodGet, "/v1/nodes/"+redfish[rand.IntN(len(redfish))]+"/firmware", nil, &fw, http.StatusOK); err == nil {
				nk.firmwareReads.Add(1)
				nk.firmwareComponents.Add(int64(len(fw.Firmware)))
			}
		}
	case 2:
		if l.serves(allocationsSince) {
			_, _ = c.call(ctx, http.MethodGet, "/v1/allocations?resource_class="+allocClass, nil, nil, http.StatusOK)
		}
	case 3:
		if l.serves("1.55") {
			_, _ = c.call(ctx, http.MethodGet, "/v1/deploy_templates?detail=True", nil, nil, http.StatusOK)
		}
	case 4:
		if l.serves("1.49") {
			_, _ = c.call(ctx, http.MethodGet, "/v1/conductors", nil, nil, http.StatusOK)
		}
	}
	pace(ctx, 50*time.Millisecond)
}

// awaitNewKinds lets the new release's workers reach every kind before
// the load stops: a trait, the kept allocation and one cycle, a row of
// each creation, a history and a BIOS read (a progress wait, not a
// timing assertion: the limit only ends a stuck run).
func (l *load) awaitNewKinds(t *testing.T) {
	t.Helper()
	nk := l.nk.Load()
	if nk == nil {
		return
	}
	reachedAll := func() bool {
		nk.mu.Lock()
		defer nk.mu.Unlock()
		for _, k := range creations {
			if len(nk.created[k.path]) == 0 && l.serves(k.since) {
				return false
			}
		}
		reached := func(since string, n int64) bool { return n > 0 || !l.serves(since) }
		return (nk.kept != "" || !l.serves(allocationsSince)) && reached(allocationsSince, nk.allocCycles.Load()) &&
			reached(traitsSince, nk.traitWrites.Load()) && reached(directSince, nk.directCycles.Load()) &&
			reached(historySince, nk.historyReads.Load()) && reached(biosSince, nk.biosReads.Load())
	}
	// Not fatal: the tables and read-backs that follow say what went wrong.
	for start := time.Now(); !reachedAll(); time.Sleep(100 * time.Millisecond) {
		if time.Since(start) > 5*time.Minute {
			nk.mu.Lock()
			defer nk.mu.Unlock()
			t.Errorf("the load did not use every new kind within 5 minutes: kept allocation %q, %d allocation cycles, %d trait writes, %d direct deploys, %d history and %d BIOS reads",
				nk.kept, nk.allocCycles.Load(), nk.traitWrites.Load(), nk.directCycles.Load(), nk.historyReads.Load(), nk.biosReads.Load())
			return
		}
	}
}

// verifyNewKinds reads every acknowledged write of the new kinds back
// with c and returns how many it checked.
func (l *load) verifyNewKinds(t *testing.T, ctx context.Context, c *client) int {
	t.Helper()
	nk := l.nk.Load()
	if nk == nil {
		return 0
	}
	checked := 0
	for node, traits := range nk.traits {
		missing, err := nk.missingTraits(ctx, c, node)
		if err != nil {
			t.Errorf("read back traits of node %s: %v", node, err)
			continue
		}
		checked += len(traits)
		for _, tr := range missing {
			t.Errorf("acknowledged write lost: node %s lacks trait %s", node, tr)
		}
	}
	for path, uuids := range nk.created {
		for _, u := range uuids {
			checked++
			if _, err := c.call(ctx, http.MethodGet, path+"/"+u, nil, nil, http.StatusOK); err != nil {
				t.Errorf("acknowledged write lost: %s/%s: %v", path, u, err)
			}
		}
	}
	if nk.kept != "" {
		checked++
		var a apiAllocation
		var n struct {
			AllocationUUID *string `json:"allocation_uuid"`
		}
		if _, err := c.call(ctx, http.MethodGet, "/v1/allocations/"+nk.kept, nil, &a, http.StatusOK); err != nil {
			t.Errorf("acknowledged write lost: allocation %s: %v", nk.kept, err)
		} else if a.State != "active" || deref(a.NodeUUID) != nk.keptNode {
			t.Errorf("allocation %s: state %q on node %q, want active on %s", nk.kept, a.State, deref(a.NodeUUID), nk.keptNode)
		}
		if _, err := c.call(ctx, http.MethodGet, "/v1/nodes/"+nk.keptNode, nil, &n, http.StatusOK); err != nil || deref(n.AllocationUUID) != nk.kept {
			t.Errorf("node %s: allocation_uuid %q, want the kept allocation %s (%v)", nk.keptNode, deref(n.AllocationUUID), nk.kept, err)
		}
	}
	if nk.directCycles.Load() > 0 {
		checked++
		var n map[string]any
		if _, err := c.call(ctx, http.MethodGet, "/v1/nodes/"+l.f.direct, nil, &n, http.StatusOK); err != nil {
			t.Errorf("read back node %s: %v", l.f.direct, err)
		} else if n["deploy_interface"] != "direct" || n["automated_clean"] != false {
			t.Errorf("acknowledged write lost: node %s deploy_interface %v, automated_clean %v; want direct, false", l.f.direct, n["deploy_interface"], n["automated_clean"])
		}
	}
	if nk.historyEntries.Load() == 0 && l.serves(historySince) {
		t.Errorf("%d node history reads after the unpin found no entry: the power and deploy workers' transitions are not recorded", nk.historyReads.Load())
	}
	var kinds []string
	for _, k := range creations {
		kinds = append(kinds, fmt.Sprintf("%s %d", strings.TrimPrefix(k.path, "/v1/"), len(nk.created[k.path])))
	}
	t.Logf("new kinds at API %s: %d direct deploys through the fake agent, %d trait writes on %d nodes, kept allocation %s on %s and %d allocate/delete cycles, %d history reads (%d entries), %d BIOS reads (%d settings), %d firmware reads (%d components), created %s; %d read back",
		c.ver(), nk.directCycles.Load(), nk.traitWrites.Load(), len(nk.traits), nk.kept, nk.keptNode, nk.allocCycles.Load(), nk.historyReads.Load(), nk.historyEntries.Load(),
		nk.biosReads.Load(), nk.biosSettings.Load(), nk.firmwareReads.Load(), nk.firmwareComponents.Load(), strings.Join(kinds, ", "), checked)
	for _, k := range creations {
		if !l.serves(k.since) {
			t.Logf("not created: %s (API %s, above the load's %s until head.API reaches it)", k.path, k.since, l.c.ver())
		}
	}
	if !l.serves(historySince) {
		t.Logf("node history not read: API %s is above the load's %s (its rows are still checked)", historySince, l.c.ver())
	}
	return checked
}
