package upgrade

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fleet is the enrolled nodes, split among the workers that change them:
// no node belongs to two workers.
type fleet struct {
	all    []string          // every node's UUID
	byName map[string]string // name → UUID
	writer [][]string        // PATCH extra markers
	power  [][]string        // power on / off
	deploy [][]string        // deploy / undeploy
	ports  [][]string        // port create / delete
	nmi    string            // a fake node no worker changes, for feature checks
	// direct (with a port of address directMAC) is deployed with the
	// direct deploy through a fake agent once the new API is served.
	direct, directMAC string
	// fieldable are the writers' nodes not deployed: their interfaces may
	// change (the newest microversion's fields).
	fieldable []string
}

// nodeSpec is a node to enroll and the state to leave it in.
type nodeSpec struct {
	name, driver string
	info         map[string]any
	state        string // enroll, manageable, available or active
	powerOn      bool
	// resourceClass, when set, makes the node a candidate of the
	// allocations the load creates once the new API is served.
	resourceClass string
}

// Sizes of the fleet: ~100 nodes.
const (
	fakeNodes    = 72
	redfishNodes = 24
	ipmiNodes    = 4
)

// specs lists the nodes: fake-hardware in every stable state, redfish on
// rivet-sim and ipmi on ipmi_sim, some powered on.
func (d *deployment) specs() []nodeSpec {
	var out []nodeSpec
	for i := range fakeNodes {
		s := nodeSpec{name: fmt.Sprintf("fake-%d", i), driver: "fake-hardware", info: map[string]any{}}
		switch {
		case i < 16: // deployed, PATCHed by the writers
			s.state = "active"
		case i < 32: // deploy / undeploy cycles (the last: direct deploys once unpinned); a few deploys take a second
			s.state = "available"
			if i%4 == 0 {
				s.info["fake_deploy_delay"] = 1
			}
		case i < 48: // PATCHed by the writers; the last eight are allocated once unpinned
			s.state = "available"
			if i >= 40 {
				s.resourceClass = allocClass
			}
		case i < 60: // ports
			s.state = "manageable"
		default: // PATCHed by the writers
			s.state = "enroll"
		}
		out = append(out, s)
	}
	for i := range redfishNodes {
		s := nodeSpec{name: fmt.Sprintf("redfish-%d", i), driver: "redfish", info: map[string]any{
			"redfish_address": d.simURL, "redfish_system_id": fmt.Sprintf("/redfish/v1/Systems/node-%d", i),
			"redfish_username": "admin", "redfish_password": "password", "redfish_verify_ca": false,
		}}
		switch {
		case i < 12: // power cycles
			s.state = "available"
		case i < 18: // powered on, PATCHed by the writers
			s.state, s.powerOn = "available", true
		default: // PATCHed by the writers
			s.state = "manageable"
		}
		out = append(out, s)
	}
	for i := range ipmiNodes {
		out = append(out, nodeSpec{name: fmt.Sprintf("ipmi-%d", i), driver: "ipmi", state: "available", powerOn: i%2 == 0,
			info: map[string]any{"ipmi_address": "127.0.0.1", "ipmi_port": d.ipmi.Port(i),
				"ipmi_username": ipmiUser, "ipmi_password": ipmiPassword}})
	}
	return out
}

// populate enrolls the fleet through the load balancer, brings every node
// to its state, and adds chassis, ports and portgroups so that every
// object table has rows.
func (d *deployment) populate(ctx context.Context, c *client) *fleet {
	t := d.t
	t.Helper()
	var chassis []string
	for i := range 2 {
		var ch struct{ UUID string }
		if _, err := c.call(ctx, http.MethodPost, "/v1/chassis", map[string]any{"description": fmt.Sprintf("rack-%d", i)}, &ch, http.StatusCreated); err != nil {
			t.Fatal(err)
		}
		chassis = append(chassis, ch.UUID)
	}
	specs := d.specs()
	f := &fleet{byName: map[string]string{}}
	var mu sync.Mutex
	errs := parallel(8, len(specs), func(i int) error {
		s := specs[i]
		body := map[string]any{"name": s.name, "driver": s.driver, "driver_info": s.info,
			"properties": map[string]any{"cpu_arch": "x86_64"}, "chassis_uuid": chassis[i%2]}
		if s.resourceClass != "" {
			body["resource_class"] = s.resourceClass
		}
		var n apiNode
		if _, err := c.call(ctx, http.MethodPost, "/v1/nodes", body, &n, http.StatusCreated); err != nil {
			return err
		}
		mu.Lock()
		f.byName[s.name] = n.UUID
		mu.Unlock()
		return d.bringTo(ctx, c, n.UUID, s)
	})
	for _, err := range errs {
		t.Error(err)
	}
	if t.Failed() {
		t.FailNow()
	}
	for _, s := range specs {
		f.all = append(f.all, f.byName[s.name])
	}
	names := func(prefix string, from, to int) []string {
		var out []string
		for i := from; i < to; i++ {
			out = append(out, f.byName[fmt.Sprintf("%s-%d", prefix, i)])
		}
		return out
	}
	writerNodes := append(append(append(names("fake", 1, 16), names("fake", 32, 48)...), names("fake", 60, 72)...), names("redfish", 12, 24)...)
	f.writer = split(writerNodes, 2)
	f.power = [][]string{names("redfish", 0, 6), names("redfish", 6, 12), names("ipmi", 0, ipmiNodes)}
	f.deploy = split(names("fake", 16, 31), 2)
	f.direct, f.directMAC = f.byName["fake-31"], mac(0xfc, 0)
	if _, err := c.call(ctx, http.MethodPost, "/v1/ports", map[string]any{"node_uuid": f.direct, "address": f.directMAC}, nil, http.StatusCreated); err != nil {
		t.Fatal(err)
	}
	f.ports = [][]string{names("fake", 48, 60)}
	f.nmi = f.byName["fake-0"]
	f.fieldable = append(names("fake", 32, 48), names("fake", 60, 72)...)

	// Ports on the deployed nodes, a portgroup on some: rows in every table.
	for i, uuid := range names("fake", 0, 16) {
		if i < 4 {
			pg := map[string]any{"node_uuid": uuid, "name": fmt.Sprintf("bond-%d", i), "address": mac(0xfe, i)}
			if _, err := c.call(ctx, http.MethodPost, "/v1/portgroups", pg, nil, http.StatusCreated); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := c.call(ctx, http.MethodPost, "/v1/ports", map[string]any{"node_uuid": uuid, "address": mac(0xfd, i)}, nil, http.StatusCreated); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

// bringTo walks a new node to its spec'd state and power.
func (d *deployment) bringTo(ctx context.Context, c *client, uuid string, s nodeSpec) error {
	steps := map[string][]struct{ verb, state string }{
		"manageable": {{"manage", "manageable"}},
		"available":  {{"manage", "manageable"}, {"provide", "available"}},
		"active":     {{"manage", "manageable"}, {"provide", "available"}, {"active", "active"}},
	}[s.state]
	for _, st := range steps {
		if err := provision(ctx, c, uuid, st.verb, st.state); err != nil {
			return err
		}
	}
	if s.powerOn {
		return setPower(ctx, c, uuid, "power on")
	}
	return nil
}

// provision requests a provision verb and waits for the state.
func provision(ctx context.Context, c *client, uuid, verb, want string) error {
	if _, err := c.call(ctx, http.MethodPut, "/v1/nodes/"+uuid+"/states/provision", map[string]any{"target": verb}, nil, http.StatusAccepted); err != nil {
		return err
	}
	return waitNode(ctx, c, uuid, "provision state "+want, func(n apiNode) (bool, error) {
		switch {
		case n.ProvisionState == want && n.TargetProvisionState == nil:
			return true, nil
		case strings.HasSuffix(n.ProvisionState, "failed") || n.ProvisionState == "error":
			return false, fmt.Errorf("node %s went to %q after %s: %s", uuid, n.ProvisionState, verb, deref(n.LastError))
		}
		return false, nil
	})
}

// setPower requests a power state and waits until it is reached.
func setPower(ctx context.Context, c *client, uuid, target string) error {
	if _, err := c.call(ctx, http.MethodPut, "/v1/nodes/"+uuid+"/states/power", map[string]any{"target": target}, nil, http.StatusAccepted); err != nil {
		return err
	}
	return waitNode(ctx, c, uuid, target, func(n apiNode) (bool, error) {
		if n.TargetPowerState != nil {
			return false, nil
		}
		if deref(n.PowerState) == target {
			return true, nil
		}
		return false, fmt.Errorf("node %s: power %q ended at %q: %s", uuid, target, deref(n.PowerState), deref(n.LastError))
	})
}

// waitNode polls the node until cond holds or fails; a minute is the limit.
func waitNode(ctx context.Context, c *client, uuid, what string, cond func(apiNode) (bool, error)) error {
	deadline := time.Now().Add(time.Minute)
	for {
		var n apiNode
		if _, err := c.call(ctx, http.MethodGet, "/v1/nodes/"+uuid, nil, &n, http.StatusOK); err != nil {
			return err
		}
		done, err := cond(n)
		if err != nil {
			return c.failed(err.Error())
		}
		if done {
			return nil
		}
		if time.Now().After(deadline) {
			return c.failed(fmt.Sprintf("node %s: %s not reached within a minute (provision %q target %v, power %q target %v)",
				uuid, what, n.ProvisionState, deref(n.TargetProvisionState), deref(n.PowerState), deref(n.TargetPowerState)))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// failed records an operation that failed though its requests succeeded
// (a node that did not reach its target).
//
// An operation accepted (202) but cut short by an injected fault is not
// an error: a conductor killed with SIGKILL leaves its deploys to the
// conductor that takes the node over, which fails them ("deploy failed",
// last_error saying it took over), and its power changes unfinished (the
// target cleared). The worker's next cycle brings the node back.
func (c *client) failed(what string) error {
	_, fault := c.rec.faultLately(20 * time.Second)
	c.rec.doneIn(c.rec.step(), 0, what, fault)
	return fmt.Errorf("%w: %s", errFailed, what)
}

// parallel runs fn(0..n-1) on conc goroutines and returns the errors.
func parallel(conc, n int, fn func(i int) error) []error {
	var next atomic.Int64
	var mu sync.Mutex
	var errs []error
	var wg sync.WaitGroup
	for range conc {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				if err := fn(i); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	return errs
}

// split deals items into n slices.
func split(items []string, n int) [][]string {
	out := make([][]string, n)
	for i, it := range items {
		out[i%n] = append(out[i%n], it)
	}
	return out
}

// mac is a locally administered MAC address from a kind byte and a number.
func mac(kind byte, n int) string {
	return fmt.Sprintf("52:54:%02x:%02x:%02x:%02x", kind, byte(n>>16), byte(n>>8), byte(n))
}

// load is the continuous client traffic of a run.
type load struct {
	c      *client
	f      *fleet
	stop   atomic.Bool
	wg     sync.WaitGroup
	mu     sync.Mutex
	acked  map[string]map[string]string // node → extra key → value, for every acknowledged PATCH
	writes atomic.Int64
	cycles atomic.Int64 // completed power, deploy and port cycles

	// Fields only the newest microversion has: once the load moves to it
	// (useNewest), the writers also set them on the nodes that may change
	// them, and every acknowledged value must read back.
	choices     atomic.Pointer[map[string][]string] // field → values to alternate
	fieldable   map[string]bool                     // nodes whose interfaces the writers change
	fields      map[string]map[string]string        // node → field → last acknowledged value
	fieldWrites atomic.Int64

	// nk is the new release's resources, once the load speaks the newest
	// microversion.
	nk atomic.Pointer[newKinds]
}

// startLoad starts the workers; stopLoad ends them after their current
// operation, so no node is left mid-change.
func startLoad(ctx context.Context, c *client, f *fleet) *load {
	l := &load{c: c, f: f, acked: map[string]map[string]string{}, fields: map[string]map[string]string{}, fieldable: map[string]bool{}}
	for _, n := range f.fieldable {
		l.fieldable[n] = true
	}
	run := func(fn func(context.Context)) {
		l.wg.Go(func() {
			for !l.stop.Load() && ctx.Err() == nil {
				fn(ctx)
			}
		})
	}
	for range 2 {
		run(l.read)
	}
	for i, nodes := range f.writer {
		seq := 0
		run(func(ctx context.Context) { l.write(ctx, i, nodes[seq%len(nodes)], seq); seq++ })
	}
	for _, nodes := range f.power {
		seq := 0
		run(func(ctx context.Context) { l.power(ctx, nodes[seq%len(nodes)]); seq++ })
	}
	for _, nodes := range f.deploy {
		seq := 0
		run(func(ctx context.Context) { l.deployCycle(ctx, nodes[seq%len(nodes)]); seq++ })
	}
	for i, nodes := range f.ports {
		seq := 0
		run(func(ctx context.Context) { l.portCycle(ctx, i, nodes[seq%len(nodes)], seq); seq++ })
	}
	return l
}

func (l *load) stopLoad() {
	l.stop.Store(true)
	l.wg.Wait()
}

// pace keeps the workers from saturating a small machine.
func pace(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// read is one read of the mix: a node, the node list (every page,
// counted), details, ports, a node's states.
func (l *load) read(ctx context.Context) {
	c, f := l.c, l.f
	node := f.all[rand.IntN(len(f.all))]
	switch rand.IntN(5) {
	case 0:
		_, _ = c.call(ctx, http.MethodGet, "/v1/nodes/"+node, nil, nil, http.StatusOK)
	case 1:
		seen := 0
		path := "/v1/nodes?limit=40"
		for path != "" {
			var page struct {
				Nodes []apiNode `json:"nodes"`
				Next  string    `json:"next"`
			}
			if _, err := c.call(ctx, http.MethodGet, path, nil, &page, http.StatusOK); err != nil {
				return
			}
			seen += len(page.Nodes)
			path = ""
			if page.Next != "" {
				if u, err := url.Parse(page.Next); err == nil {
					path = u.RequestURI()
				}
			}
		}
		if seen != len(f.all) {
			c.rec.done(c.rec.step(), 0, fmt.Sprintf("the node list has %d nodes, want %d", seen, len(f.all)))
		}
	case 2:
		_, _ = c.call(ctx, http.MethodGet, "/v1/nodes/detail?limit=25", nil, nil, http.StatusOK)
	case 3:
		_, _ = c.call(ctx, http.MethodGet, "/v1/ports?limit=50", nil, nil, http.StatusOK)
	case 4:
		_, _ = c.call(ctx, http.MethodGet, "/v1/nodes/"+node+"/states", nil, nil, http.StatusOK)
	}
	pace(ctx, 20*time.Millisecond)
}

// write PATCHes a unique marker into a node's extra and remembers it once
// acknowledged.
func (l *load) write(ctx context.Context, worker int, node string, seq int) {
	key := fmt.Sprintf("w%d_%d", worker, seq)
	val := fmt.Sprintf("%s-%x", l.c.rec.step().name, rand.Uint32())
	patch := []map[string]any{{"op": "add", "path": "/extra/" + key, "value": val}}
	field, fval := "", ""
	if ch := l.choices.Load(); ch != nil && l.fieldable[node] && seq%2 == 0 {
		names := slices.Sorted(maps.Keys(*ch))
		field = names[(seq/2)%len(names)]
		vals := (*ch)[field]
		fval = vals[(seq/2/len(names))%len(vals)]
		patch = append(patch, map[string]any{"op": "replace", "path": "/" + field, "value": fval})
	}
	if _, err := l.c.call(ctx, http.MethodPatch, "/v1/nodes/"+node, patch, nil, http.StatusOK); err == nil {
		l.mu.Lock()
		if l.acked[node] == nil {
			l.acked[node] = map[string]string{}
		}
		l.acked[node][key] = val
		if field != "" {
			if l.fields[node] == nil {
				l.fields[node] = map[string]string{}
			}
			l.fields[node][field] = fval
			l.fieldWrites.Add(1)
		}
		l.mu.Unlock()
		l.writes.Add(1)
	}
	pace(ctx, 40*time.Millisecond)
}

// power switches a node to the other power state and waits for it.
func (l *load) power(ctx context.Context, node string) {
	var n apiNode
	if _, err := l.c.call(ctx, http.MethodGet, "/v1/nodes/"+node, nil, &n, http.StatusOK); err != nil {
		return
	}
	target := "power on"
	if deref(n.PowerState) == "power on" {
		target = "power off"
	}
	if setPower(ctx, l.c, node, target) == nil {
		l.cycles.Add(1)
	}
}

// deployCycle deploys a node and undeploys it. A node left active by an
// earlier failed cycle (its outcome unknown to the client) is undeployed
// first, so one failure is counted once; so is a node a fault left in
// "deploy failed" or "error".
func (l *load) deployCycle(ctx context.Context, node string) {
	var n apiNode
	if _, err := l.c.call(ctx, http.MethodGet, "/v1/nodes/"+node, nil, &n, http.StatusOK); err != nil {
		return
	}
	switch n.ProvisionState {
	case "deploy failed", "error":
		// A fault cut the last deploy or undeploy short (the conductor
		// that took the node over failed it): undeploy, as an operator
		// would, then go on.
		if provision(ctx, l.c, node, "deleted", "available") != nil {
			return
		}
		n.ProvisionState = "available"
	}
	if n.ProvisionState != "active" && provision(ctx, l.c, node, "active", "active") != nil {
		return
	}
	if provision(ctx, l.c, node, "deleted", "available") == nil {
		l.cycles.Add(1)
	}
}

// portCycle creates a port on a node, reads it and deletes it.
func (l *load) portCycle(ctx context.Context, worker int, node string, seq int) {
	var p struct{ UUID string }
	body := map[string]any{"node_uuid": node, "address": mac(byte(worker), seq), "extra": map[string]any{"seq": seq}}
	if _, err := l.c.call(ctx, http.MethodPost, "/v1/ports", body, &p, http.StatusCreated); err != nil {
		return
	}
	if _, err := l.c.call(ctx, http.MethodGet, "/v1/ports/"+p.UUID, nil, nil, http.StatusOK); err != nil {
		return
	}
	if _, err := l.c.call(ctx, http.MethodDelete, "/v1/ports/"+p.UUID, nil, nil, http.StatusNoContent); err == nil {
		l.cycles.Add(1)
	}
	pace(ctx, 50*time.Millisecond)
}

// verifyWrites reads every node with acknowledged markers back with c
// and reports each marker missing or changed, and each new field whose
// last acknowledged value is not what the node holds. c must speak the
// newest microversion when new fields were written.
func (l *load) verifyWrites(t *testing.T, ctx context.Context, c *client) (markers, fields int) {
	t.Helper()
	for node, want := range l.acked {
		var n map[string]any
		if _, err := c.call(ctx, http.MethodGet, "/v1/nodes/"+node, nil, &n, http.StatusOK); err != nil {
			t.Errorf("read back node %s: %v", node, err)
			continue
		}
		extra, _ := n["extra"].(map[string]any)
		for k, v := range want {
			markers++
			if got, ok := extra[k]; !ok || got != v {
				t.Errorf("acknowledged write lost: node %s extra[%s] = %v (present %v), want %q", node, k, got, ok, v)
			}
		}
		for k, v := range l.fields[node] {
			fields++
			if got, ok := n[k]; !ok || got != v {
				t.Errorf("acknowledged write lost: node %s %s = %v (present %v, read at %s), want %q", node, k, got, ok, c.ver(), v)
			}
		}
	}
	return markers, fields
}

// useNewest moves the load to the newest microversion v once every API
// serves it unpinned, and starts writing the fields that appeared after
// the old maximum: the node's interfaces that the fake-hardware type
// offers more than one implementation of (GET /v1/drivers/fake-hardware).
func (l *load) useNewest(ctx context.Context, t *testing.T, probe *client, v string) {
	t.Helper()
	l.c.useVersion(v)
	l.c.rec.setVersion(v)
	pc := *probe
	pc.version = v
	var drv map[string]any
	if _, err := pc.call(ctx, http.MethodGet, "/v1/drivers/fake-hardware", nil, &drv, http.StatusOK); err != nil {
		t.Fatalf("driver fake-hardware at %s: %v", v, err)
	}
	var node map[string]any
	if _, err := pc.call(ctx, http.MethodGet, "/v1/nodes/"+l.f.nmi, nil, &node, http.StatusOK); err != nil {
		t.Fatalf("node at %s: %v", v, err)
	}
	ch := map[string][]string{}
	for k, vals := range drv {
		field := strings.TrimSuffix(strings.TrimPrefix(k, "enabled_"), "s")
		list, _ := vals.([]any)
		if !strings.HasPrefix(k, "enabled_") || !strings.HasSuffix(field, "_interface") || len(list) < 2 {
			continue
		}
		if _, ok := node[field]; !ok {
			continue // older than the node's own field
		}
		switch field {
		case "boot_interface", "deploy_interface", "power_interface", "management_interface", "network_interface":
			continue // what the power and deploy workers rely on
		}
		for _, x := range list {
			if s, ok := x.(string); ok {
				ch[field] = append(ch[field], s)
			}
		}
	}
	l.startNewKinds(ctx)
	if len(ch) == 0 {
		t.Logf("API %s: no node interface of fake-hardware has two implementations; the writers write extra only", v)
		return
	}
	l.choices.Store(&ch)
	t.Logf("the load now speaks API %s and alternates %v on %d nodes", v, ch, len(l.fieldable))
}
