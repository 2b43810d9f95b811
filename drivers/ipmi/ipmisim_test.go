package ipmi

import (
	"strconv"
	"testing"

	"github.com/rivetmetal/rivet/plugins"
	"github.com/rivetmetal/rivet/test/testenv"
)

// simFleet is testenv's ipmi_sim fleet with the driver's test credentials.
type simFleet struct{ *testenv.IPMISimFleet }

func startSims(t *testing.T, n int, multi bool) *simFleet {
	t.Helper()
	return &simFleet{testenv.StartIPMISim(t, n, multi, testUser, testPassword)}
}

func (f *simFleet) restart(t *testing.T) { f.Restart(t) }

func (f *simFleet) file(t *testing.T, i int, name string) string { return f.File(t, i, name) }

// node reaches BMC i with settings fit for a loopback simulator.
func (f *simFleet) node(i int, extra plugins.DriverInfo) plugins.Node {
	info := plugins.DriverInfo{KeyAddress: "127.0.0.1", KeyPort: strconv.Itoa(f.Port(i)), KeyUsername: testUser,
		KeyPassword: testPassword, KeyTimeout: 0.5, KeyRetries: 1, KeyMinCommandInterval: 0.01, KeyPowerStateChangeTimeout: 10}
	for k, v := range extra {
		info[k] = v
	}
	return plugins.Node{UUID: "sim-" + strconv.Itoa(i), HardwareType: HardwareType, DriverInfo: info}
}
