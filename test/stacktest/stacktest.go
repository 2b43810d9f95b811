// Package stacktest wires the in-process stacks tests run against: an API
// over a real conductor in the same process (RPC over a local transport,
// the conductors the database sees alive), with drivers as plugin
// processes. Each test keeps its own configuration; only the wiring is
// shared.
package stacktest

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/rivetmetal/rivet/core/api"
	"github.com/rivetmetal/rivet/core/conductor"
	"github.com/rivetmetal/rivet/core/config"
	"github.com/rivetmetal/rivet/core/keyring"
	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/core/release"
	"github.com/rivetmetal/rivet/core/rpc"
	"github.com/rivetmetal/rivet/core/version"
	"github.com/rivetmetal/rivet/db"
	"github.com/rivetmetal/rivet/db/dbtest"
	"github.com/rivetmetal/rivet/drivers/redfish/sim"
	"github.com/rivetmetal/rivet/plugins/host"
	"github.com/rivetmetal/rivet/plugins/plugintest"
)

// MainWithPlugins is a TestMain that builds this tree's fake and redfish
// driver plugins once into a temporary directory (removed afterwards),
// stores their paths in fakeBin and redfishBin, and runs the tests.
func MainWithPlugins(m *testing.M, fakeBin, redfishBin *string) {
	dir, err := os.MkdirTemp("", "rivet-stacktest")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := 1
	*fakeBin, err = plugintest.Build(dir, "github.com/rivetmetal/rivet/cmd/rivet-driver-fake", "rivet-driver-fake")
	if err == nil {
		*redfishBin, err = plugintest.Build(dir, "github.com/rivetmetal/rivet/cmd/rivet-driver-redfish", "rivet-driver-redfish")
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "build plugins:", err)
	} else {
		code = m.Run()
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

// StartPlugins starts a plugin host with cfg, closed when the test ends;
// the test fails when the host cannot start or refuses a plugin.
func StartPlugins(t testing.TB, cfg host.Config) *host.Manager {
	t.Helper()
	mgr, err := host.New(cfg)
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
	return mgr
}

// SQLiteStore opens a fresh SQLite database (removed when the test ends)
// and its store of this release's objects under pinner; keyed gives the
// store a test keyring, so BMC credentials are stored encrypted as in
// production.
func SQLiteStore(t testing.TB, pinner *release.Pinner, keyed bool) (*db.DB, *db.Store) {
	t.Helper()
	dbh := dbtest.Open(t, db.SQLite)
	reg := objects.NewRegistry()
	if err := objects.Install(reg); err != nil {
		t.Fatal(err)
	}
	store := db.NewStore(dbh, reg, pinner)
	if keyed {
		keys, err := keyring.Parse([]byte("k1:" + base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, 32))))
		if err != nil {
			t.Fatal(err)
		}
		store = store.WithKeyring(keys)
	}
	return dbh, store
}

// ConductorConfig is the default conductor configuration with a test's
// hostname and quick heartbeats (every 100ms, dead after 5s).
func ConductorConfig(hostname string) conductor.Config {
	cfg := conductor.ConfigFrom(config.Default())
	cfg.Hostname, cfg.HeartbeatInterval, cfg.HeartbeatTimeout = hostname, 100*time.Millisecond, 5*time.Second
	return cfg
}

// StartConductor builds and starts a conductor, stopped when the test ends.
func StartConductor(t testing.TB, cfg conductor.Config, deps conductor.Deps) *conductor.Service {
	t.Helper()
	svc, err := conductor.New(cfg, deps)
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = svc.Stop(context.Background()) })
	return svc
}

// APIDeps are the API's dependencies over svc in this process: store and
// pinner, the conductors dbh sees alive within heartbeatTimeout, and the
// conductor RPC over a local transport, capped at the pinner's release.
func APIDeps(dbh *db.DB, store *db.Store, pinner *release.Pinner, svc *conductor.Service, heartbeatTimeout time.Duration) api.Deps {
	lister := func(ctx context.Context) ([]rpc.ConductorInfo, error) {
		live, err := dbh.LiveConductors(ctx, heartbeatTimeout)
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
		rpc.ObjectCodecFor(store.Registry(), pinner), rpc.LocalTransport{Server: svc.RPCServer()})
	return api.Deps{Store: store, Pinner: pinner, Conductors: lister,
		Conductor: rpc.ConductorAPI{Client: client, Router: rpc.NewRouter(lister, 5, time.Hour)}}
}

// Serve builds the API of deps and serves it until the test ends.
func Serve(t testing.TB, deps api.Deps) *httptest.Server {
	t.Helper()
	h, err := api.New(deps)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

// StartBMC serves a Redfish simulator of opts until the test ends.
func StartBMC(t testing.TB, opts sim.Options) (*sim.Simulator, *httptest.Server) {
	t.Helper()
	b, err := sim.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(b.Handler())
	t.Cleanup(srv.Close)
	t.Cleanup(func() { _ = b.Close() })
	return b, srv
}

// Do sends one JSON request to the API at url with microversion version
// and returns the status and the body read whole.
func Do(t testing.TB, url, version, method, path, body string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set(api.HeaderVersion, version)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, data
}
