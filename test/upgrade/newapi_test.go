package upgrade

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/rivetmetal/rivet/core/release"
	"github.com/rivetmetal/rivet/core/rpc"
	"github.com/rivetmetal/rivet/core/version"
)

// What HEAD adds over the cut release it upgrades from is derived from the
// code, never listed here, so the proof widens with every new microversion
// and RPC method (issue 30):
//   - the microversions: the keys of versionTests in
//     core/api/versions_test.go (every version the REST API implements,
//     advertised or still above head.API);
//   - the RPC methods and arguments: core/rpc/testdata/HEAD/methods.json
//     against the cut release's testdata/<release>/methods.json.

// repoRoot is the module's root, from this package's directory.
const repoRoot = "../.."

var (
	implementedOnce sync.Once
	implemented     []version.Version
	implementedErr  error
)

// implementedVersions parses versionTests out of core/api/versions_test.go:
// every microversion the working tree implements, sorted.
func implementedVersions() ([]version.Version, error) {
	implementedOnce.Do(func() {
		path := filepath.Join(repoRoot, "core", "api", "versions_test.go")
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
		if err != nil {
			implementedErr = err
			return
		}
		ast.Inspect(f, func(n ast.Node) bool {
			vs, ok := n.(*ast.ValueSpec)
			if !ok || len(vs.Names) != 1 || vs.Names[0].Name != "versionTests" || len(vs.Values) != 1 {
				return true
			}
			lit, ok := vs.Values[0].(*ast.CompositeLit)
			if !ok {
				return false
			}
			for _, e := range lit.Elts {
				kv, ok := e.(*ast.KeyValueExpr)
				if !ok {
					continue
				}
				key, ok := kv.Key.(*ast.BasicLit)
				if !ok || key.Kind != token.STRING {
					continue
				}
				s, err := strconv.Unquote(key.Value)
				if err != nil {
					continue
				}
				v, err := version.Parse(s)
				if err != nil {
					implementedErr = fmt.Errorf("%s: versionTests key %q: %v", path, s, err)
					return false
				}
				implemented = append(implemented, v)
			}
			return false
		})
		if implementedErr == nil && len(implemented) == 0 {
			implementedErr = fmt.Errorf("%s: no versionTests map found", path)
		}
		slices.SortFunc(implemented, version.Version.Compare)
	})
	return implemented, implementedErr
}

// newVersions is every implemented microversion above old.
func newVersions(t testing.TB, old version.Version) []version.Version {
	t.Helper()
	all, err := implementedVersions()
	if err != nil {
		t.Fatal(err)
	}
	var out []version.Version
	for _, v := range all {
		if v.Compare(old) > 0 {
			out = append(out, v)
		}
	}
	return out
}

// family is a resource, verb or field family a new microversion brought:
// one request sampled per family. While the fleet serves the old maximum
// each must be refused with 406 before reaching a conductor, whatever the
// resource (a pinned API acts as the old release).
type family struct {
	since  string
	name   string
	method string
	path   string // %s: the probe node
	body   any
}

var families = []family{
	{"1.32", "volume", http.MethodGet, "/v1/volume", nil},
	{"1.32", "volume connectors", http.MethodPost, "/v1/volume/connectors", map[string]any{"node_uuid": "%s", "type": "iqn", "connector_id": "iqn.2026-11.org.rivet:probe"}},
	{"1.37", "node traits", http.MethodPut, "/v1/nodes/%s/traits/CUSTOM_PROBE", nil},
	{"1.40", "BIOS settings", http.MethodGet, "/v1/nodes/%s/bios", nil},
	{"1.49", "conductors", http.MethodGet, "/v1/conductors", nil},
	{"1.52", "allocations", http.MethodPost, "/v1/allocations", map[string]any{"resource_class": "probe"}},
	{"1.54", "events", http.MethodPost, "/v1/events", map[string]any{"events": []any{}}},
	{"1.55", "deploy templates", http.MethodPost, "/v1/deploy_templates", map[string]any{"name": "CUSTOM_PROBE", "steps": []any{}}},
	{"1.63", "indicators", http.MethodGet, "/v1/nodes/%s/management/indicators", nil},
	{"1.74", "BIOS registry", http.MethodGet, "/v1/nodes/%s/bios?detail=True", nil},
	{"1.76", "set boot mode", http.MethodPut, "/v1/nodes/%s/states/boot_mode", map[string]any{"target": "uefi"}},
	{"1.78", "node history", http.MethodGet, "/v1/nodes/%s/history", nil},
	{"1.81", "node inventory", http.MethodGet, "/v1/nodes/%s/inventory", nil},
	{"1.86", "firmware components", http.MethodGet, "/v1/nodes/%s/firmware", nil},
	{"1.87", "service", http.MethodPut, "/v1/nodes/%s/states/provision", map[string]any{"target": "service", "service_steps": []any{}}},
	{"1.89", "virtual media", http.MethodGet, "/v1/nodes/%s/vmedia", nil},
	{"1.92", "runbooks", http.MethodPost, "/v1/runbooks", map[string]any{"name": "CUSTOM_PROBE", "steps": []any{}}},
	{"1.96", "inspection rules", http.MethodPost, "/v1/inspection_rules", map[string]any{"actions": []any{}}},
}

// checkFamilies sends each family's request at its version (each
// implemented, above the old maximum) and wants 406: the fleet serves the
// old maximum. Families HEAD does not implement yet are skipped, so the
// list may run ahead of main.
func (r *run) checkFamilies(step string) {
	t := r.t
	t.Helper()
	impl, err := implementedVersions()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		v := version.MustParse(f.since)
		if v.Compare(r.oldMax) <= 0 || !slices.ContainsFunc(impl, func(x version.Version) bool { return x.Compare(v) == 0 }) {
			continue
		}
		c := *r.probe
		c.version = f.since
		status, data, err := rawCall(r.ctx, &c, f.method, strings.ReplaceAll(f.path, "%s", r.f.nmi), withNode(f.body, r.f.nmi))
		if err != nil || status != http.StatusNotAcceptable {
			t.Errorf("step %s: %s (%s %s at %s) while the fleet serves %s: HTTP %d, %v, want 406: %.200s",
				step, f.name, f.method, f.path, f.since, r.oldMax, status, err, data)
		}
	}
}

// withNode fills %s in a body's string values with node.
func withNode(body any, node string) any {
	m, ok := body.(map[string]any)
	if !ok {
		return body
	}
	out := map[string]any{}
	for k, v := range m {
		if s, ok := v.(string); ok && s == "%s" {
			v = node
		}
		out[k] = v
	}
	return out
}

// checkEveryVersion sends GET /v1/nodes/<probe> at every implemented
// microversion above the old maximum: 200 up to the maximum the fleet
// serves (max), 406 above it.
func (r *run) checkEveryVersion(step string, max version.Version) {
	t := r.t
	t.Helper()
	for _, v := range newVersions(t, r.oldMax) {
		want := http.StatusNotAcceptable
		if v.Compare(max) <= 0 {
			want = http.StatusOK
		}
		c := *r.probe
		c.version = v.String()
		status, data, err := rawCall(r.ctx, &c, http.MethodGet, "/v1/nodes/"+r.f.nmi, nil)
		if err != nil || status != want {
			t.Errorf("step %s: GET a node at API %s while the fleet serves %s: HTTP %d, %v, want %d: %.200s",
				step, v, max, status, err, want, data)
		}
	}
}

// rpcMethodsFile is core/rpc/testdata/<release>/methods.json.
type rpcMethodsFile struct {
	RPC     string `json:"rpc"`
	Methods []struct {
		Name  string `json:"name"`
		Since string `json:"since"`
		Args  []struct {
			Name     string `json:"name"`
			Type     string `json:"type"`
			Since    string `json:"since"`
			Required bool   `json:"required"`
			// Values are string values newer than the argument; with
			// ValueKey, of that field of each element of an array.
			Values   map[string]string `json:"values"`
			ValueKey string            `json:"value_key"`
		} `json:"args"`
	} `json:"methods"`
}

func readRPCMethods(t testing.TB, rel string) rpcMethodsFile {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, "core", "rpc", "testdata", rel, "methods.json"))
	if err != nil {
		t.Fatal(err)
	}
	var f rpcMethodsFile
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatal(err)
	}
	return f
}

// noTransport fails the test if anything is sent.
type noTransport struct{ t testing.TB }

func (n noTransport) Send(_ context.Context, host string, req *rpc.Request) (json.RawMessage, error) {
	n.t.Errorf("capped client sent %s to %s", req.Method, host)
	return nil, errors.New("not sent")
}

// zeroOf is a value of an argument's wire type.
func zeroOf(typ string) any {
	switch typ {
	case "string":
		return "x"
	case "boolean":
		return true
	case "integer":
		return 1
	case "array":
		return []any{"x"}
	default:
		return map[string]any{"uuid": "x"}
	}
}

// TestNewRPCMethodsCapped: every RPC method, argument and argument value
// HEAD has that the newest cut release's conductor lacks (the two
// methods.json files) is capped by the client a pinned API or conductor
// uses: the method refused with a CapError before anything is sent, a new
// argument refused or left out, a new value refused. Cheap: no deployment.
func TestNewRPCMethodsCapped(t *testing.T) {
	rels := release.Default().Releases()
	old := rels[len(rels)-1]
	oldFile, head := readRPCMethods(t, old.Version), readRPCMethods(t, "HEAD")
	if oldFile.RPC != old.RPC.String() {
		t.Fatalf("testdata/%s/methods.json is at RPC %s, the release table says %s", old.Version, oldFile.RPC, old.RPC)
	}
	oldArgs := map[string]map[string]bool{}
	oldValues := map[string]bool{} // method/argument/value
	for _, m := range oldFile.Methods {
		oldArgs[m.Name] = map[string]bool{}
		for _, a := range m.Args {
			oldArgs[m.Name][a.Name] = true
			for val := range a.Values {
				oldValues[m.Name+"/"+a.Name+"/"+val] = true
			}
		}
	}
	c := rpc.NewClient(rpc.ConductorMethods(), func() version.Version { return old.RPC }, rpc.PlainCodec{}, noTransport{t})
	ctx := context.Background()
	var methods, args, values int
	for _, m := range head.Methods {
		known, existed := oldArgs[m.Name]
		if !existed {
			methods++
			if c.CanSend(m.Name) {
				t.Errorf("RPC method %s (since %s) is new since %s but the client capped at %s may send it", m.Name, m.Since, old.Version, old.RPC)
			}
			params := map[string]any{}
			for _, a := range m.Args {
				if a.Required {
					params[a.Name] = zeroOf(a.Type)
				}
			}
			var ce *rpc.CapError
			if _, err := c.Prepare(ctx, m.Name, params); !errors.As(err, &ce) {
				t.Errorf("RPC method %s, new since %s, prepared under cap %s: %v, want a CapError", m.Name, old.Version, old.RPC, err)
			}
			continue
		}
		for _, a := range m.Args {
			if known[a.Name] {
				// A value new since the release: refused before sending.
				for val := range a.Values {
					if oldValues[m.Name+"/"+a.Name+"/"+val] {
						continue
					}
					values++
					var arg any = val
					if a.ValueKey != "" {
						arg = []any{map[string]any{a.ValueKey: val}}
					}
					params := map[string]any{a.Name: arg}
					for _, b := range m.Args {
						if b.Required && b.Name != a.Name {
							params[b.Name] = zeroOf(b.Type)
						}
					}
					var ce *rpc.CapError
					if _, err := c.Prepare(ctx, m.Name, params); !errors.As(err, &ce) {
						t.Errorf("RPC %s with %s %q (new since %s) prepared under cap %s: %v, want a CapError",
							m.Name, a.Name, val, old.Version, old.RPC, err)
					}
				}
				continue
			}
			args++
			params := map[string]any{a.Name: zeroOf(a.Type)}
			for _, b := range m.Args {
				if b.Required && known[b.Name] {
					params[b.Name] = zeroOf(b.Type)
				}
			}
			req, err := c.Prepare(ctx, m.Name, params)
			var ce *rpc.CapError
			switch {
			case errors.As(err, &ce):
			case err != nil:
				t.Errorf("RPC %s with argument %s (new since %s): %v, want it refused (CapError) or left out", m.Name, a.Name, old.Version, err)
			case req.Params[a.Name] != nil:
				t.Errorf("RPC %s under cap %s sends argument %s, new since %s", m.Name, old.RPC, a.Name, old.Version)
			case version.MustParse(req.Version).Compare(old.RPC) > 0:
				t.Errorf("RPC %s under cap %s sent at version %s", m.Name, old.RPC, req.Version)
			}
		}
	}
	if head.RPC != old.RPC.String() && methods+args+values == 0 {
		t.Errorf("HEAD's RPC %s is above %s's %s but methods.json shows nothing new", head.RPC, old.Version, old.RPC)
	}
	t.Logf("%d RPC methods, %d arguments and %d argument values new since %s (RPC %s → %s): each capped",
		methods, args, values, old.Version, old.RPC, head.RPC)
}

// TestImplementedVersions: the microversion list parses, and HEAD's
// advertised maximum is among the versions it implements.
func TestImplementedVersions(t *testing.T) {
	all, err := implementedVersions()
	if err != nil {
		t.Fatal(err)
	}
	head := release.Default().Head().API
	if !slices.ContainsFunc(all, func(v version.Version) bool { return v.Compare(head) == 0 }) {
		t.Errorf("head.API %s is not a key of versionTests (%d versions parsed)", head, len(all))
	}
	rels := release.Default().Releases()
	last := rels[len(rels)-1]
	if n := len(newVersions(t, last.API)); n == 0 && last.API.Less(head) {
		t.Errorf("head.API %s is above %s's %s but no microversion above it is listed", head, last.Version, last.API)
	} else if n == 0 {
		t.Logf("HEAD speaks %s's %s: nothing new to refuse while pinned (right after a cut)", last.Version, last.API)
	}
	for _, f := range families {
		if _, err := version.Parse(f.since); err != nil {
			t.Errorf("family %s: %v", f.name, err)
		}
	}
}

// checkOldPlugins validates every node while a new conductor runs the old
// release's driver plugins (manual/postgresql, steps 1.1 to 2.2): what the
// new host asks of a plugin beyond the old one's services and interface
// versions (plugins.InterfaceVersions, the Validation service…) must be
// skipped or refused cleanly, so each node answers 200 with its power
// and management interfaces valid, whichever conductor and plugin serve
// it.
func (r *run) checkOldPlugins(step string) {
	t := r.t
	t.Helper()
	if !r.sc.oldPlugins || r.d.conductors[0].pluginDir != r.old.dir {
		return
	}
	errs := parallel(4, len(r.f.all), func(i int) error {
		node := r.f.all[i]
		var v map[string]struct {
			Result *bool   `json:"result"`
			Reason *string `json:"reason"`
		}
		status, data, err := rawCall(r.ctx, r.probe, http.MethodGet, "/v1/nodes/"+node+"/validate", nil)
		if err != nil || status != http.StatusOK {
			return fmt.Errorf("GET /v1/nodes/%s/validate: HTTP %d, %v: %.300s", node, status, err, data)
		}
		if err := json.Unmarshal(data, &v); err != nil {
			return fmt.Errorf("validate %s: %v: %.200s", node, err, data)
		}
		for _, iface := range []string{"power", "management"} {
			if res := v[iface]; res.Result == nil || !*res.Result {
				return fmt.Errorf("node %s: %s interface not valid beside a plugin of %s: %s", node, iface, r.old.info.Release, deref(res.Reason))
			}
		}
		return nil
	})
	for i, err := range errs {
		if i == 5 {
			t.Errorf("step %s: … %d nodes in all", step, len(errs))
			break
		}
		t.Errorf("step %s: %v", step, err)
	}
	if len(errs) == 0 {
		t.Logf("step %s: %d nodes validated while %s runs %s's plugins", step, len(r.f.all), r.d.conductors[0].name, r.old.info.Release)
	}
}
