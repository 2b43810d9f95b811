package redfish_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rivetmetal/rivet/drivers/redfish"
	"github.com/rivetmetal/rivet/drivers/redfish/sim"
	"github.com/rivetmetal/rivet/plugins"
)

// fuzzTargets are the resources whose answer a fuzz case replaces; the last
// entry replaces every answer.
var fuzzTargets = []string{
	"/redfish/v1", "/redfish/v1/SessionService/Sessions", "/redfish/v1/Systems/node-0",
	"/redfish/v1/Managers/BMC-node-0", "/redfish/v1/Managers/BMC-node-0/VirtualMedia",
	"/redfish/v1/Systems/node-0/VirtualMedia", "/redfish/v1/Chassis/node-0", "/redfish/v1/Systems",
	"/redfish/v1/Systems/node-0/Processors", "/redfish/v1/Systems/node-0/EthernetInterfaces", "*",
}

var fuzzStatuses = []int{200, 201, 202, 204, 301, 400, 401, 404, 409, 412, 500, 503}

// fuzzCase is what the BMC answers to the targeted resource.
type fuzzCase struct {
	target string
	status int
	body   []byte
}

// FuzzRedfishResponses serves a simulated BMC whose answer to one resource
// (or to all) is an arbitrary body and status, and drives the driver's
// reads and writes against it: the driver never panics, every call
// returns, and no error carries the password.
func FuzzRedfishResponses(f *testing.F) {
	const password = "fuzz-redfish-canary-pw"
	s, err := sim.New(sim.Options{Password: password, SystemVirtualMedia: true})
	if err != nil {
		f.Fatal(err)
	}
	var cur atomic.Pointer[fuzzCase]
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := cur.Load()
		if c != nil && (c.target == "*" || strings.TrimRight(r.URL.Path, "/") == c.target) {
			w.Header().Set("Content-Type", "application/json")
			if c.status == http.StatusCreated {
				w.Header().Set("X-Auth-Token", "tok")
				w.Header().Set("Location", "/redfish/v1/SessionService/Sessions/1")
			}
			w.WriteHeader(c.status)
			_, _ = w.Write(c.body)
			return
		}
		s.Handler().ServeHTTP(w, r)
	}))
	f.Cleanup(srv.Close)
	f.Cleanup(func() { _ = s.Close() })

	// One driver for every case, as a plugin serves a BMC for its lifetime:
	// a driver per case would open a connection per case and run the host
	// out of ephemeral ports. Its breaker never opens, so each case reaches
	// the BMC.
	o := redfish.DefaultOptions()
	o.ConnectionTimeout, o.PowerPollInterval, o.PowerStateChangeTimeout = 2*time.Second, time.Millisecond, 2*time.Millisecond
	o.SessionRetryMax, o.BreakerThreshold = 10*time.Millisecond, 1<<30
	d := redfish.New(slog.New(slog.DiscardHandler), o)
	f.Cleanup(func() { _ = d.Close(context.Background()) })

	for i, seed := range []string{
		`{"@odata.id":"/redfish/v1/","Systems":{"@odata.id":"/redfish/v1/Systems"},"RedfishVersion":"1.6.0"}`,
		`{"PowerState":"On","Boot":{"BootSourceOverrideTarget":"Pxe","BootSourceOverrideTarget@Redfish.AllowableValues":[1,null,{}]}}`,
		`{"Members":[{"@odata.id":null},{"@odata.id":"/redfish/v1/Systems/../../x"}],"Members@odata.count":-1}`,
		`{"error":{"code":"Base.1.8.GeneralError","@Message.ExtendedInfo":[{"MessageId":5}]}}`,
		`{"PowerState":{"nested":[[[[]]]]},"ProcessorSummary":{"Count":"many"},"MemorySummary":{"TotalSystemMemoryGiB":1e308}}`,
		`{"Inserted":"yes","Image":12,"MediaTypes":"CD","Actions":{"#VirtualMedia.InsertMedia":{"target":""}}}`,
		``, `null`, `[]`, `{`, "\xff\xfe", `{"@odata.id":"/redfish/v1/Systems/node-0","Links":{"ManagedBy":[{}]}}`,
	} {
		f.Add(uint8(i), uint8(i), []byte(seed))
	}
	f.Fuzz(func(t *testing.T, target, status uint8, body []byte) {
		cur.Store(&fuzzCase{target: fuzzTargets[int(target)%len(fuzzTargets)], status: fuzzStatuses[int(status)%len(fuzzStatuses)], body: body})
		defer cur.Store(nil)
		n := plugins.Node{UUID: "fuzz", HardwareType: redfish.HardwareType, InstanceInfo: map[string]any{redfish.KeyBootISO: "http://x/d.iso"},
			DriverInfo: plugins.DriverInfo{redfish.KeyAddress: srv.URL, redfish.KeySystemID: "/redfish/v1/Systems/node-0",
				redfish.KeyUsername: sim.DefaultUsername, redfish.KeyPassword: password}}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		calls := []func() error{
			func() error { _, err := d.GetPowerState(ctx, n); return err },
			func() error { _, err := d.GetBootDevice(ctx, n); return err },
			func() error { _, err := d.SupportedBootDevices(ctx, n); return err },
			func() error { _, err := d.Inspect(ctx, n); return err },
			func() error { return d.SetPowerState(ctx, n, plugins.PowerOn) },
			func() error {
				return d.SetBootDevice(ctx, n, plugins.BootDeviceSetting{Device: plugins.BootPXE})
			},
			func() error { return d.PrepareDeploy(ctx, n) },
		}
		for _, call := range calls {
			if err := call(); err != nil && strings.Contains(err.Error(), password) {
				t.Fatalf("error leaks the password: %v", err)
			}
		}
	})
}
