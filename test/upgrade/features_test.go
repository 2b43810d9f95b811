package upgrade

import (
	"context"
	"fmt"
	"net/http"
	"slices"

	"github.com/google/uuid"
)

// feature is something only a newer REST API microversion offers. While
// the load balancer serves the old maximum its first request must be
// refused with 406 (the seed: a pinned API acts as the old release); once
// the fleet is new and unpinned the whole feature must work, through the
// conductors' new RPC methods. Features are keyed on the version that
// introduced them, so each is tried only when the new release claims it.
type feature struct {
	since string
	name  string
	// try runs the feature at version since on node, a fake-hardware node
	// no worker changes; served says whether it must work or be refused.
	try func(ctx context.Context, c *client, node string, served bool) error
}

var features = []feature{
	{since: "1.27", name: "power on with a timeout", try: func(ctx context.Context, c *client, node string, served bool) error {
		body := map[string]any{"target": "power on", "timeout": 30}
		if _, err := c.call(ctx, http.MethodPut, "/v1/nodes/"+node+"/states/power", body, nil, wantIf(served, http.StatusAccepted)); err != nil || !served {
			return err
		}
		return waitNode(ctx, c, node, "power on", func(n apiNode) (bool, error) {
			return n.TargetPowerState == nil && deref(n.PowerState) == "power on", nil
		})
	}},
	{since: "1.28", name: "attach, list and detach a VIF", try: tryVIFs},
	{since: "1.29", name: "inject an NMI", try: func(ctx context.Context, c *client, node string, served bool) error {
		_, err := c.call(ctx, http.MethodPut, "/v1/nodes/"+node+"/management/inject_nmi", map[string]any{}, nil, wantIf(served, http.StatusNoContent))
		return err
	}},
	{since: "1.30", name: "a driver's interfaces in detail", try: func(ctx context.Context, c *client, _ string, served bool) error {
		var d map[string]any
		if _, err := c.call(ctx, http.MethodGet, "/v1/drivers/fake-hardware", nil, &d, wantIf(served, http.StatusOK)); err != nil || !served {
			return err
		}
		if d["type"] != "dynamic" || d["enabled_power_interfaces"] == nil {
			return fmt.Errorf("GET /v1/drivers/fake-hardware at 1.30 lacks type and enabled_power_interfaces: %v", d)
		}
		return nil
	}},
	{since: "1.31", name: "a node's interface fields", try: func(ctx context.Context, c *client, node string, served bool) error {
		var n map[string]any
		if _, err := c.call(ctx, http.MethodGet, "/v1/nodes/"+node, nil, &n, wantIf(served, http.StatusOK)); err != nil || !served {
			return err
		}
		if _, ok := n["power_interface"]; !ok {
			return fmt.Errorf("GET /v1/nodes/%s at 1.31 has no power_interface", node)
		}
		return nil
	}},
}

// wantIf is the status a feature request must get.
func wantIf(served bool, ok int) int {
	if served {
		return ok
	}
	return http.StatusNotAcceptable
}

func tryVIFs(ctx context.Context, c *client, node string, served bool) error {
	vif := uuid.NewString()
	path := "/v1/nodes/" + node + "/vifs"
	if _, err := c.call(ctx, http.MethodPost, path, map[string]any{"id": vif}, nil, wantIf(served, http.StatusNoContent)); err != nil || !served {
		return err
	}
	var list struct {
		VIFs []struct {
			ID string `json:"id"`
		} `json:"vifs"`
	}
	if _, err := c.call(ctx, http.MethodGet, path, nil, &list, http.StatusOK); err != nil {
		return err
	}
	if !slices.ContainsFunc(list.VIFs, func(v struct {
		ID string `json:"id"`
	}) bool {
		return v.ID == vif
	}) {
		return fmt.Errorf("VIF %s attached but not listed: %+v", vif, list.VIFs)
	}
	_, err := c.call(ctx, http.MethodDelete, path+"/"+vif, nil, nil, http.StatusNoContent)
	return err
}
