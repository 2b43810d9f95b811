package ipmi

import (
	"testing"

	"github.com/rivetmetal/rivet/plugins"
)

// StartTestBMC starts an in-process BMC for the external test package and
// returns a node that reaches it.
func StartTestBMC(t *testing.T) plugins.Node { return startBMC(t, bmcConfig{}).node(nil) }
