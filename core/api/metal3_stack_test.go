package api_test

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/rivetmetal/rivet/core/api"
	"github.com/rivetmetal/rivet/core/catalog"
	"github.com/rivetmetal/rivet/core/conductor"
	"github.com/rivetmetal/rivet/core/config"
	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/core/release"
	"github.com/rivetmetal/rivet/core/rpc"
	"github.com/rivetmetal/rivet/core/version"
	"github.com/rivetmetal/rivet/db"
	"github.com/rivetmetal/rivet/db/dbtest"
	"github.com/rivetmetal/rivet/plugins/host"
	"github.com/rivetmetal/rivet/plugins/plugintest"
)

// raisedMaxAPI, when set, is a microversion the test API serves up to
// beyond Rivet's advertised maximum (release head.API). Empty: the test
// negotiates against what Rivet really advertises (1.110), and fails if
// that is below BMO's baseline 1.89.
const raisedMaxAPI = ""

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
	mgr, err := host.New(host.Config{Logger: log, WatchInterval: -1,
		BuiltIn: map[string]host.Command{"redfish": {Path: redfishBin}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(mgr.Close)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := mgr.Start(ctx); err != nil {
		t.Fatal(err)
	}
	for name, err := range mgr.Refused() {
		t.Fatalf("plugin %s refused: %v", name, err)
	}

	dbh := dbtest.Open(t, db.SQLite)
	reg := objects.NewRegistry()
	if err := objects.Install(reg); err != nil {
		t.Fatal(err)
	}
	pinner := release.NewPinner(release.Default(), release.Pin{})
	store := db.NewStore(dbh, reg, pinner)
	cfg := conductor.ConfigFrom(config.Default())
	cfg.Hostname, cfg.HeartbeatInterval, cfg.HeartbeatTimeout = "cond-1", 100*time.Millisecond, 5*time.Second
	cfg.PowerSync.Interval, cfg.CheckInterval = 0, time.Second
	cfg.AutomatedClean, cfg.EraseDevicesMetadataPriority = true, 99
	cfg.DeployCallbackTimeout, cfg.InspectWaitTimeout = time.Minute, time.Minute
	cfg.Agent.PollInterval = 100 * time.Millisecond
	// As Metal3's ironic-image configures Ironic: BMO leaves
	// deploy_interface unset for image deploys and needs direct.
	cfg.DefaultDeploy = catalog.Direct
	svc, err := conductor.New(cfg, conductor.Deps{Store: store, Pinner: pinner, Logger: log,
		Drivers: conductor.PluginDrivers{Manager: mgr, Enabled: []string{"redfish"}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = svc.Stop(context.Background()) })
	lister := func(ctx context.Context) ([]rpc.ConductorInfo, error) {
		live, err := dbh.LiveConductors(ctx, cfg.HeartbeatTimeout)
		if err != nil {
			return nil, err
		}
		var infos []rpc.ConductorInfo
		for _, c := range live {
			infos = append(infos, rpc.ConductorInfo{Hostname: c.Hostname, Group: c.ConductorGroup, HardwareTypes: c.Drivers})
		}
		return infos, nil
	}
	client := rpc.NewClient(rpc.ConductorMethods(), func() version.Version { return pinner.Effective().RPC },
		rpc.ObjectCodecFor(reg, pinner), rpc.LocalTransport{Server: svc.RPCServer()})
	deps := api.Deps{Store: store, Pinner: pinner, Conductors: lister, Logger: log,
		Conductor: rpc.ConductorAPI{Client: client, Router: rpc.NewRouter(lister, 5, time.Hour)}}
	if raisedMaxAPI != "" {
		api.WithTestMaxAPI(raisedMaxAPI)(&deps)
	}
	h, err := api.New(deps)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}
