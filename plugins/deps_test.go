package plugins

import (
	"os/exec"
	"strings"
	"testing"
)

// TestSDKImportsNoCore keeps the SDK free of Rivet's core, db and drivers,
// so a third-party driver author needs only plugins/... and go-plugin.
func TestSDKImportsNoCore(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-test", "github.com/rivetmetal/rivet/plugins/...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, pkg := range strings.Fields(string(out)) {
		for _, banned := range []string{"core", "db", "drivers"} {
			prefix := "github.com/rivetmetal/rivet/" + banned
			if pkg == prefix || strings.HasPrefix(pkg, prefix+"/") {
				t.Errorf("the SDK depends on %s", pkg)
			}
		}
	}
}
