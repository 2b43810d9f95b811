package api_test

import (
	"log/slog"
	"testing"
	"time"

	"github.com/rivetmetal/rivet/core/catalog"
	"github.com/rivetmetal/rivet/core/conductor"
	"github.com/rivetmetal/rivet/core/release"
	"github.com/rivetmetal/rivet/plugins/host"
	"github.com/rivetmetal/rivet/plugins/plugintest"
	"github.com/rivetmetal/rivet/test/stacktest"
)

// newMetal3Stack starts the all-in-one stack (API and conductor sharing a
// process over SQLite, the redfish plugin) and returns the API's URL.
// The conductor cleans automatically (BMO turns it on per node anyway),
// runs IPA's erase_devices_metadata, polls the agent quickly, and deploys
// direct by default ([conductor] default_deploy_interface).
func newMetal3Stack(t *testing.T) string {
	t.Helper()
	// The conductor runs the redfish plugin as a process, as rivet dev does.
	redfishBin, err := plugintest.Build(t.TempDir(), "github.com/rivetmetal/rivet/cmd/rivet-driver-redfish", "rivet-driver-redfish")
	if err != nil {
		t.Fatalf("build the redfish plugin: %v", err)
	}
	log := slog.New(slog.DiscardHandler)
	mgr := stacktest.StartPlugins(t, host.Config{Logger: log, WatchInterval: -1,
		BuiltIn: map[string]host.Command{"redfish": {Path: redfishBin}}})

	pinner := release.NewPinner(release.Default(), release.Pin{})
	dbh, store := stacktest.SQLiteStore(t, pinner, false)
	cfg := stacktest.ConductorConfig("cond-1")
	cfg.PowerSync.Interval, cfg.CheckInterval = 0, time.Second
	cfg.AutomatedClean, cfg.EraseDevicesMetadataPriority = true, 99
	cfg.DeployCallbackTimeout, cfg.InspectWaitTimeout = time.Minute, time.Minute
	cfg.Agent.PollInterval = 100 * time.Millisecond
	// As Metal3's ironic-image configures Ironic: BMO leaves
	// deploy_interface unset for image deploys and needs direct.
	cfg.DefaultDeploy = catalog.Direct
	svc := stacktest.StartConductor(t, cfg, conductor.Deps{Store: store, Pinner: pinner, Logger: log,
		Drivers: conductor.PluginDrivers{Manager: mgr, Enabled: []string{"redfish"}}})
	deps := stacktest.APIDeps(dbh, store, pinner, svc, cfg.HeartbeatTimeout)
	deps.Logger = log
	srv := stacktest.Serve(t, deps)
	return srv.URL
}
