package rpc

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rivetmetal/rivet/core/release"
	"github.com/rivetmetal/rivet/core/version"
)

var update = flag.Bool("update", false, "rewrite testdata/HEAD/methods.json from ConductorMethods()")

// methodsFile is testdata/<release>/methods.json: the conductor RPC API a
// release speaks, every method and argument with the version that
// introduced it and the argument's wire type. HEAD's is regenerated with
//
//	go test ./core/rpc -run TestMethodsGolden -update
//
// and cutting release X.Y copies it to testdata/X.Y/methods.json, which
// then never changes (docs/contributor/rpc-and-api.md).
type methodsFile struct {
	// RPC is the release's conductor RPC API version.
	RPC string `json:"rpc"`
	// Source says where a file not copied from HEAD at the cut came from.
	Source  string      `json:"source,omitempty"`
	Methods []methodDoc `json:"methods"`
}

type methodDoc struct {
	Name  string   `json:"name"`
	Since string   `json:"since"`
	Args  []argDoc `json:"args"`
}

type argDoc struct {
	Name     string `json:"name"`
	Type     string `json:"type"`
	Since    string `json:"since"`
	Required bool   `json:"required"`
	// Values are string values newer than the argument, with their version.
	Values map[string]string `json:"values,omitempty"`
	// ValueKey is the field of an array's elements Values lists.
	ValueKey string `json:"value_key,omitempty"`
}

// docOf is the file form of a method table, methods sorted by name and
// arguments in declaration order.
func docOf(t *Methods) methodsFile {
	f := methodsFile{RPC: t.Version().String(), Methods: []methodDoc{}}
	for _, name := range t.Names() {
		m, _ := t.Lookup(name)
		md := methodDoc{Name: m.Name, Since: m.Since.String(), Args: []argDoc{}}
		for _, a := range m.Args {
			ad := argDoc{Name: a.Name, Type: string(a.Type), Since: a.Since.String(), Required: a.Required, ValueKey: a.ValueKey}
			for val, since := range a.Values {
				if ad.Values == nil {
					ad.Values = map[string]string{}
				}
				ad.Values[val] = since.String()
			}
			md.Args = append(md.Args, ad)
		}
		f.Methods = append(f.Methods, md)
	}
	return f
}

func marshalMethods(f methodsFile) ([]byte, error) {
	b, err := json.MarshalIndent(f, "", "  ")
	return append(b, '\n'), err
}

func readMethods(path string) (methodsFile, error) {
	var f methodsFile
	b, err := os.ReadFile(path)
	if err != nil {
		return f, err
	}
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return f, fmt.Errorf("%s: %w", path, err)
	}
	return f, nil
}

// The rules of seeds/000 ("Ironic RPC versions") the golden files enforce,
// quoted in every failure.
const (
	ruleNoRemoval = `seeds/000: "Old methods can be removed only after they are no longer used by a previous named release"` +
		`: while a release that calls a method is in the release table, the method stays`
	ruleArgs = `seeds/000: "Until there is a major version bump, new arguments of an RPC method can only be added as optional. ` +
		`Existing arguments cannot be removed or changed in incompatible ways"`
	ruleBump = `seeds/000: "When the signature (arguments) of an RPC method is changed or new methods are added, ` +
		`the RPC version must be incremented"`
)

// compat lists how cur breaks what release rel (its file old) spoke:
// every method and argument of old is still there with the same version,
// type, requiredness and values, and everything cur adds is newer than
// old's RPC version (a minor bump) and, for an argument of an old method,
// optional.
func compat(rel string, old, cur methodsFile) []string {
	var errs []string
	fail := func(rule, format string, args ...any) {
		errs = append(errs, fmt.Sprintf(format, args...)+"; "+rule)
	}
	oldRPC, err := version.Parse(old.RPC)
	if err != nil {
		return []string{fmt.Sprintf("release %s: rpc %q: %v", rel, old.RPC, err)}
	}
	byName := func(ms []methodDoc, name string) (methodDoc, bool) {
		i := slices.IndexFunc(ms, func(m methodDoc) bool { return m.Name == name })
		if i < 0 {
			return methodDoc{}, false
		}
		return ms[i], true
	}
	argByName := func(as []argDoc, name string) (argDoc, bool) {
		i := slices.IndexFunc(as, func(a argDoc) bool { return a.Name == name })
		if i < 0 {
			return argDoc{}, false
		}
		return as[i], true
	}
	for _, om := range old.Methods {
		cm, ok := byName(cur.Methods, om.Name)
		if !ok {
			fail(ruleNoRemoval, "method %s, which release %s calls, was removed", om.Name, rel)
			continue
		}
		if cm.Since != om.Since {
			fail(ruleBump, "method %s was introduced at %s (release %s) but now says %s: the version that introduced it never changes",
				om.Name, om.Since, rel, cm.Since)
		}
		for _, oa := range om.Args {
			ca, ok := argByName(cm.Args, oa.Name)
			switch {
			case !ok:
				fail(ruleArgs, "argument %s of %s, which release %s sends, was removed", oa.Name, om.Name, rel)
				continue
			case ca.Type != oa.Type:
				fail(ruleArgs, "argument %s of %s changed type from %s (release %s) to %s: add a new argument instead",
					oa.Name, om.Name, oa.Type, rel, ca.Type)
			}
			if ca.Required != oa.Required {
				fail(ruleArgs, "argument %s of %s was %s in release %s and is now %s",
					oa.Name, om.Name, requiredWord(oa.Required), rel, requiredWord(ca.Required))
			}
			if ca.Since != oa.Since {
				fail(ruleBump, "argument %s of %s was introduced at %s (release %s) but now says %s: the version that introduced it never changes",
					oa.Name, om.Name, oa.Since, rel, ca.Since)
			}
			if len(oa.Values) > 0 && ca.ValueKey != oa.ValueKey {
				fail(ruleArgs, "argument %s of %s matched its values against %q in release %s and now against %q: an old value would be read anew",
					oa.Name, om.Name, oa.ValueKey, rel, ca.ValueKey)
			}
			for val, since := range oa.Values {
				if got, ok := ca.Values[val]; !ok || got != since {
					fail(ruleArgs, "value %q of argument %s of %s (since %s in release %s) was removed or re-versioned (%q)",
						val, oa.Name, om.Name, since, rel, got)
				}
			}
			for val, since := range ca.Values {
				if _, ok := oa.Values[val]; !ok && !newer(since, oldRPC) {
					fail(ruleBump, "value %q of argument %s of %s is new since release %s (RPC %s) but says since %s: bump rpc.APIVersion and record the new version",
						val, oa.Name, om.Name, rel, old.RPC, since)
				}
			}
		}
		for _, ca := range cm.Args {
			if _, ok := argByName(om.Args, ca.Name); ok {
				continue
			}
			if !newer(ca.Since, oldRPC) {
				fail(ruleBump, "argument %s of %s is new since release %s (RPC %s) but says since %s: bump rpc.APIVersion and record the new version",
					ca.Name, om.Name, rel, old.RPC, ca.Since)
			}
			if ca.Required {
				fail(ruleArgs, "new argument %s of %s (since %s) is required but release %s does not send it: make it optional",
					ca.Name, om.Name, ca.Since, rel)
			}
		}
	}
	for _, cm := range cur.Methods {
		if _, ok := byName(old.Methods, cm.Name); ok {
			continue
		}
		if !newer(cm.Since, oldRPC) {
			fail(ruleBump, "method %s is new since release %s (RPC %s) but says since %s: bump rpc.APIVersion and record the new version",
				cm.Name, rel, old.RPC, cm.Since)
		}
	}
	return errs
}

// newer reports whether the version string s is above rel.
func newer(s string, rel version.Version) bool {
	v, err := version.Parse(s)
	return err == nil && rel.Less(v)
}

func requiredWord(required bool) string {
	if required {
		return "required"
	}
	return "optional"
}

// TestMethodsGolden checks ConductorMethods() against testdata/HEAD/
// methods.json (byte for byte: regenerate after a deliberate change) and,
// under the rules of seeds/000, against the file of every release in the
// release table: what a supported release speaks is never taken away.
func TestMethodsGolden(t *testing.T) {
	cur := docOf(ConductorMethods())
	want, err := marshalMethods(cur)
	if err != nil {
		t.Fatal(err)
	}
	headPath := filepath.Join("testdata", release.HeadKey, "methods.json")
	if *update {
		if err := os.MkdirAll(filepath.Dir(headPath), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(headPath, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	head, err := readMethods(headPath)
	if err != nil {
		t.Fatalf("%v: regenerate with go test ./core/rpc -run TestMethodsGolden -update", err)
	}
	if diff := cmp.Diff(head, cur); diff != "" {
		t.Errorf("the conductor RPC API differs from %s (-file +code):\n%s\nafter a deliberate change, follow docs/contributor/rpc-and-api.md and "+
			"regenerate with go test ./core/rpc -run TestMethodsGolden -update", headPath, diff)
	}
	for _, e := range release.Default().Releases() {
		path := filepath.Join("testdata", e.Version, "methods.json")
		f, err := readMethods(path)
		if errors.Is(err, os.ErrNotExist) {
			t.Errorf("release %s has no %s: cutting a release copies testdata/HEAD/methods.json there", e.Label(), path)
			continue
		} else if err != nil {
			t.Error(err)
			continue
		}
		if f.RPC != e.RPC.String() {
			t.Errorf("%s says RPC %s but core/release lists %s for release %s", path, f.RPC, e.RPC, e.Version)
		}
		if v, err := version.Parse(f.RPC); err == nil && v.Major != APIVersion.Major {
			t.Logf("release %s speaks RPC major %d, this code %d: no compatibility to keep", e.Version, v.Major, APIVersion.Major)
			continue
		}
		for _, msg := range compat(e.Version, f, cur) {
			t.Errorf("conductor RPC API breaks release %s (%s): %s", e.Version, path, msg)
		}
	}
}

// Each rule of compat fails the change it is about, naming the rule.
func TestMethodsCompatRules(t *testing.T) {
	base := methodsFile{RPC: "1.0", Methods: []methodDoc{
		{Name: "power", Since: "1.0", Args: []argDoc{
			{Name: "node_id", Type: "string", Since: "1.0", Required: true},
			{Name: "state", Type: "string", Since: "1.0", Required: true, Values: map[string]string{"soft": "1.0"}},
			{Name: "force", Type: "boolean", Since: "1.0"},
		}},
		{Name: "clean", Since: "1.0", Args: []argDoc{{Name: "node_id", Type: "string", Since: "1.0", Required: true}}},
	}}
	clone := func() methodsFile {
		b, _ := json.Marshal(base)
		var f methodsFile
		if err := json.Unmarshal(b, &f); err != nil {
			t.Fatal(err)
		}
		f.RPC = "1.1"
		return f
	}
	power := func(f *methodsFile) *methodDoc { return &f.Methods[0] }
	tests := map[string]struct {
		mut  func(f *methodsFile)
		want string // "" means compatible
	}{
		"unchanged": {mut: func(*methodsFile) {}},
		"method added with a bump": {mut: func(f *methodsFile) {
			f.Methods = append(f.Methods, methodDoc{Name: "nmi", Since: "1.1", Args: []argDoc{{Name: "node_id", Type: "string", Since: "1.1", Required: true}}})
		}},
		"optional argument added with a bump": {mut: func(f *methodsFile) {
			power(f).Args = append(power(f).Args, argDoc{Name: "timeout", Type: "integer", Since: "1.1"})
		}},
		"value added with a bump": {mut: func(f *methodsFile) { power(f).Args[1].Values["hard"] = "1.1" }},
		"method removed": {mut: func(f *methodsFile) { f.Methods = f.Methods[:1] },
			want: "method clean, which release 0.1 calls, was removed; seeds/000: \"Old methods can be removed only after"},
		"argument removed": {mut: func(f *methodsFile) { power(f).Args = power(f).Args[:2] },
			want: "argument force of power, which release 0.1 sends, was removed; seeds/000: \"Until there is a major version bump, new arguments"},
		"argument type changed": {mut: func(f *methodsFile) { power(f).Args[2].Type = "string" },
			want: "argument force of power changed type from boolean (release 0.1) to string: add a new argument instead; seeds/000"},
		"optional made required": {mut: func(f *methodsFile) { power(f).Args[2].Required = true },
			want: "argument force of power was optional in release 0.1 and is now required"},
		"argument re-versioned": {mut: func(f *methodsFile) { power(f).Args[2].Since = "1.1" },
			want: "argument force of power was introduced at 1.0 (release 0.1) but now says 1.1"},
		"method re-versioned": {mut: func(f *methodsFile) { f.Methods[1].Since = "1.1" },
			want: "method clean was introduced at 1.0 (release 0.1) but now says 1.1"},
		"value removed": {mut: func(f *methodsFile) { delete(power(f).Args[1].Values, "soft") },
			want: `value "soft" of argument state of power (since 1.0 in release 0.1) was removed`},
		"method added without a bump": {mut: func(f *methodsFile) {
			f.Methods = append(f.Methods, methodDoc{Name: "nmi", Since: "1.0", Args: []argDoc{}})
		}, want: "method nmi is new since release 0.1 (RPC 1.0) but says since 1.0: bump rpc.APIVersion; seeds/000: \"When the signature"},
		"argument added without a bump": {mut: func(f *methodsFile) {
			power(f).Args = append(power(f).Args, argDoc{Name: "timeout", Type: "integer", Since: "1.0"})
		}, want: "argument timeout of power is new since release 0.1 (RPC 1.0) but says since 1.0"},
		"value added without a bump": {mut: func(f *methodsFile) { power(f).Args[1].Values["hard"] = "1.0" },
			want: `value "hard" of argument state of power is new since release 0.1 (RPC 1.0) but says since 1.0`},
		"required argument added": {mut: func(f *methodsFile) {
			power(f).Args = append(power(f).Args, argDoc{Name: "timeout", Type: "integer", Since: "1.1", Required: true})
		}, want: "new argument timeout of power (since 1.1) is required but release 0.1 does not send it: make it optional"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			cur := clone()
			tc.mut(&cur)
			errs := compat("0.1", base, cur)
			if tc.want == "" {
				if len(errs) > 0 {
					t.Fatalf("compatible change refused: %v", errs)
				}
				return
			}
			if len(errs) != 1 || !strings.Contains(strings.ReplaceAll(errs[0], " and record the new version", ""), tc.want) {
				t.Fatalf("errors %q, want one containing %q", errs, tc.want)
			}
		})
	}
}
