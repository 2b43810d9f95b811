package plugins

import (
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"os"
	"slices"
	"strings"
	"testing"
)

// hostOnly names what the host (plugins/host) and the wire both ends share
// (plugins/internal/wire) hold, and what once sat in this package beside
// the author's API. None may come back here: a driver author's package
// exports the author's API only. Methods are listed as Type.Method.
var hostOnly = []string{
	// The host's gRPC client and its power-action checks.
	"Client", "Client.CheckPowerAction", "Client.PowerAction", "Client.Protocol",
	"PowerActor", "LocalPowerActor",
	// go-plugin glue, both ends.
	"GRPCPlugin", "GRPCPlugin.GRPCServer", "GRPCPlugin.GRPCClient", "PluginSets",
	"PluginName", "Handshake", "DescribeEnv", "ParentPollInterval",
	// Errors only the host raises.
	"PluginCrashedError", "ErrPluginCrashed", "IncompatibleError", "ErrIncompatible",
	"ValidationError",
}

// exportedAPI lists the exported identifiers of the package in dir, with
// exported methods as Type.Method, from its non-test files.
func exportedAPI(t *testing.T, dir string) []string {
	t.Helper()
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, dir, func(fi os.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, p := range pkgs {
		for _, f := range p.Files {
			files = append(files, f)
		}
	}
	p, err := doc.NewFromFiles(fset, files, "github.com/rivetmetal/rivet/plugins")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	values := func(vs []*doc.Value) {
		for _, v := range vs {
			names = append(names, v.Names...)
		}
	}
	funcs := func(prefix string, fs []*doc.Func) {
		for _, f := range fs {
			names = append(names, prefix+f.Name)
		}
	}
	values(p.Consts)
	values(p.Vars)
	funcs("", p.Funcs)
	for _, ty := range p.Types {
		names = append(names, ty.Name)
		values(ty.Consts)
		values(ty.Vars)
		funcs("", ty.Funcs)
		funcs(ty.Name+".", ty.Methods)
	}
	slices.Sort(names)
	return names
}

// TestAuthorAPIHasNoHostOnlyNames fails when a name that belongs to the
// host, or to the wire both ends share, is exported by the author's
// package again.
func TestAuthorAPIHasNoHostOnlyNames(t *testing.T) {
	api := exportedAPI(t, ".")
	if !slices.Contains(api, "Serve") || !slices.Contains(api, "Node") || !slices.Contains(api, "DriverInfo.Redacted") {
		t.Fatalf("the exported API read from source misses Serve, Node or DriverInfo.Redacted: %v", api)
	}
	for _, name := range hostOnly {
		if slices.Contains(api, name) {
			t.Errorf("package plugins exports %s, which only the host uses: put it in plugins/host (or plugins/internal/wire if both ends need it)", name)
		}
	}
	t.Logf("%d exported identifiers: %s", len(api), strings.Join(api, " "))
}
