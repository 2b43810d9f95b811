package client

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rivetmetal/rivet/core/version"
)

// TestNodeActions checks each action's method, path and body.
func TestNodeActions(t *testing.T) {
	cases := map[string]struct {
		call     func(context.Context, *Client) error
		wantCall string
		wantBody string
	}{
		"power on": {
			call:     func(ctx context.Context, c *Client) error { return c.SetPowerState(ctx, "n1", PowerOn) },
			wantCall: "PUT /v1/nodes/n1/states/power", wantBody: `{"target":"power on"}`,
		},
		"reboot": {
			call:     func(ctx context.Context, c *Client) error { return c.SetPowerState(ctx, "n1", Reboot) },
			wantCall: "PUT /v1/nodes/n1/states/power", wantBody: `{"target":"rebooting"}`,
		},
		"deploy": {
			call: func(ctx context.Context, c *Client) error {
				return c.SetProvisionState(ctx, "n1", ProvisionRequest{Target: VerbDeploy})
			},
			wantCall: "PUT /v1/nodes/n1/states/provision", wantBody: `{"target":"active"}`,
		},
		"clean with steps": {
			call: func(ctx context.Context, c *Client) error {
				return c.SetProvisionState(ctx, "n1", ProvisionRequest{Target: VerbClean,
					CleanSteps: []map[string]any{{"interface": "deploy", "step": "erase_devices"}}})
			},
			wantCall: "PUT /v1/nodes/n1/states/provision",
			wantBody: `{"target":"clean","clean_steps":[{"interface":"deploy","step":"erase_devices"}]}`,
		},
		"maintenance on with reason": {
			call:     func(ctx context.Context, c *Client) error { return c.SetMaintenance(ctx, "n1", "disk swap") },
			wantCall: "PUT /v1/nodes/n1/maintenance", wantBody: `{"reason":"disk swap"}`,
		},
		"maintenance off": {
			call:     func(ctx context.Context, c *Client) error { return c.UnsetMaintenance(ctx, "n1") },
			wantCall: "DELETE /v1/nodes/n1/maintenance",
		},
		"boot device": {
			call:     func(ctx context.Context, c *Client) error { return c.SetBootDevice(ctx, "n1", "pxe", true) },
			wantCall: "PUT /v1/nodes/n1/management/boot_device", wantBody: `{"boot_device":"pxe","persistent":true}`,
		},
		"set and unset": {
			call: func(ctx context.Context, c *Client) error {
				ops := append(SetOps(map[string]any{"name": "x", "driver_info/ipmi_address": "1.2.3.4"}), UnsetOps("extra/foo")...)
				_, err := c.Update(ctx, Nodes, "n1", ops)
				return err
			},
			wantCall: "PATCH /v1/nodes/n1",
			wantBody: `[{"op":"add","path":"/driver_info/ipmi_address","value":"1.2.3.4"},{"op":"add","path":"/name","value":"x"},{"op":"remove","path":"/extra/foo"}]`,
		},
		"name with a slash is escaped": {
			call:     func(ctx context.Context, c *Client) error { return c.Delete(ctx, Nodes, "a/b") },
			wantCall: "DELETE /v1/nodes/a%2Fb",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			fake, srv := newFake(t, "1.1", maxV, recordAll())
			c := newTestClient(t, srv.URL, Request{}, nil)
			if err := tc.call(context.Background(), c); err != nil {
				t.Fatal(err)
			}
			got := [2]string{fake.requests()[0], fake.bodies[0]}
			if diff := cmp.Diff([2]string{tc.wantCall, tc.wantBody}, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestSoftPowerNeedsV1_27: soft targets and timeouts need API 1.27. They go
// out at 1.27 to a server that has it; against a 1.26 server (release 0.1,
// or a newer one pinned to it), or with --api-version 1.26, they fail with
// a *FeatureVersionError before the PUT, while a hard target still works.
// A cached 1.26 is negotiated afresh, as the server may have been unpinned.
func TestSoftPowerNeedsV1_27(t *testing.T) {
	soft := PowerRequest{Target: SoftPowerOff, Timeout: 30}
	put := "PUT /v1/nodes/n1/states/power"
	cases := map[string]struct {
		max       string
		version   string // --api-version
		cached    string // version in the cache
		req       PowerRequest
		wantErr   bool
		wantCalls []string // "VERSION METHOD /path"
		wantBody  string   // of the PUT
	}{
		"current server":        {max: maxV, req: soft, wantCalls: []string{maxV + " GET /v1", maxV + " " + put}, wantBody: `{"target":"soft power off","timeout":30}`},
		"1.27 server":           {max: "1.27", req: soft, wantCalls: []string{maxV + " GET /v1", "1.27 GET /v1", "1.27 " + put}, wantBody: `{"target":"soft power off","timeout":30}`},
		"timeout only":          {max: maxV, req: PowerRequest{Target: PowerOn, Timeout: 5}, wantCalls: []string{maxV + " GET /v1", maxV + " " + put}, wantBody: `{"target":"power on","timeout":5}`},
		"1.26 server":           {max: "1.26", req: soft, wantErr: true, wantCalls: []string{maxV + " GET /v1", "1.26 GET /v1"}},
		"1.26 server, hard":     {max: "1.26", req: PowerRequest{Target: PowerOff}, wantCalls: []string{maxV + " " + put, "1.26 " + put}, wantBody: `{"target":"power off"}`},
		"user 1.26":             {max: maxV, version: "1.26", req: PowerRequest{Target: SoftReboot}, wantErr: true, wantCalls: []string{"1.26 GET /v1"}},
		"latest, 1.26 server":   {max: "1.26", version: "latest", req: soft, wantErr: true, wantCalls: []string{"latest GET /v1"}},
		"stale cache, 1.27 now": {max: maxV, cached: "1.26", req: soft, wantCalls: []string{"1.26 GET /v1", maxV + " GET /v1", maxV + " " + put}, wantBody: `{"target":"soft power off","timeout":30}`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			fake, srv := newFake(t, "1.1", tc.max, nil) // GET /v1 200, PUT states 202
			req, err := ParseRequest(tc.version)
			if err != nil {
				t.Fatal(err)
			}
			var cache VersionCache
			if tc.cached != "" {
				cache = NewMemoryCache()
				cache.Store(srv.URL+"/v1", version.MustParse(tc.cached))
			}
			c := newTestClient(t, srv.URL, req, cache)
			err = c.ChangePowerState(context.Background(), "n1", tc.req)
			var ferr *FeatureVersionError
			if tc.wantErr != errors.As(err, &ferr) || (!tc.wantErr && err != nil) {
				t.Fatalf("err = %v, want a FeatureVersionError: %v", err, tc.wantErr)
			}
			if ferr != nil && (ferr.Needs != version.New(1, 27) || !strings.Contains(ferr.Error(), "needs API 1.27")) {
				t.Errorf("error %q", ferr)
			}
			var calls []string
			for i, r := range fake.requests() {
				calls = append(calls, fake.sent()[i]+" "+r)
				if r == put && fake.bodies[i] != tc.wantBody {
					t.Errorf("body %s, want %s", fake.bodies[i], tc.wantBody)
				}
			}
			if diff := cmp.Diff(tc.wantCalls, calls); diff != "" {
				t.Errorf("requests (-want +got):\n%s", diff)
			}
		})
	}
}
