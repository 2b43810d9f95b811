package client

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
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
