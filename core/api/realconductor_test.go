package api

import (
	"context"
	"testing"
	"time"

	"github.com/rivetmetal/rivet/core/conductor"
	"github.com/rivetmetal/rivet/core/config"
	"github.com/rivetmetal/rivet/core/rpc"
	"github.com/rivetmetal/rivet/core/version"
	"github.com/rivetmetal/rivet/drivers/fake"
)

// withRealConductor serves the env's API over a real conductor
// (fake-hardware, in-process RPC capped at the pinner's release) on the
// env's store, instead of the fake: for features whose behaviour lives in
// the conductor's handlers.
func withRealConductor(t testing.TB) envOption {
	return func(d *Deps) {
		cfg := conductor.ConfigFrom(config.Default())
		cfg.Hostname, cfg.HeartbeatInterval, cfg.HeartbeatTimeout = "cond-real", 100*time.Millisecond, 5*time.Second
		cfg.PowerSync.Interval, cfg.AutomatedClean, cfg.CheckInterval = 0, false, time.Hour
		svc, err := conductor.New(cfg, conductor.Deps{Store: d.Store, Pinner: d.Pinner,
			Drivers: conductor.StaticDrivers{fake.HardwareType: fake.New(nil)}})
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		if err := svc.Start(ctx); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = svc.Stop(ctx) })
		lister := func(context.Context) ([]rpc.ConductorInfo, error) {
			return []rpc.ConductorInfo{{Hostname: cfg.Hostname, HardwareTypes: []string{fake.HardwareType}}}, nil
		}
		pinner, reg := d.Pinner, d.Store.Registry()
		client := rpc.NewClient(rpc.ConductorMethods(), func() version.Version { return pinner.Effective().RPC },
			rpc.ObjectCodecFor(reg, pinner), rpc.LocalTransport{Server: svc.RPCServer()})
		d.Conductor = rpc.ConductorAPI{Client: client, Router: rpc.NewRouter(lister, 5, time.Hour)}
		d.Conductors = lister
	}
}
