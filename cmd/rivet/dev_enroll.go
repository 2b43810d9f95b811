package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/rivetmetal/rivet/core/client"
	"github.com/rivetmetal/rivet/drivers/redfish/sim"
)

// simPower sets a simulated system's power (sim.Simulator.SetPower).
type simPower interface {
	SetPower(id string, on bool) error
}

// enrollSimNodes makes sure nodes sim-0 … sim-n-1 exist, point at the
// simulator's current address and rest in available, through the public
// API, as an operator would. Nodes already past available (deployed, in
// maintenance, failed) are left as they are, and the simulator, new at
// every start, is given the power state they were left in, so that a
// deployed node is still powered on after a restart instead of reporting a
// stale state until the next power sync.
func enrollSimNodes(ctx context.Context, apiURL, simURL string, n int, bmc simPower, log *slog.Logger) error {
	cl, err := client.New(client.Options{URL: apiURL, Cache: client.NewMemoryCache(), UserAgent: "rivet-dev"})
	if err != nil {
		return err
	}
	var errs []error
	for i := range n {
		name := fmt.Sprintf("sim-%d", i)
		if err := enrollSimNode(ctx, cl, name, simURL, sim.SystemID(i), bmc); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", name, err))
			continue
		}
		log.Debug("simulated node ready", "node", name)
	}
	return errors.Join(errs...)
}

func enrollSimNode(ctx context.Context, cl *client.Client, name, simURL, systemID string, bmc simPower) error {
	info := map[string]any{
		"redfish_address":   simURL,
		"redfish_system_id": "/redfish/v1/Systems/" + systemID,
		"redfish_username":  sim.DefaultUsername,
		"redfish_password":  sim.DefaultPassword,
		"redfish_verify_ca": false,
	}
	node, err := cl.Get(ctx, client.Nodes, name)
	switch {
	case errors.Is(err, client.ErrNotFound):
		node, err = cl.Create(ctx, client.Nodes, map[string]any{
			"name": name, "driver": "redfish", "driver_info": info,
			// The simulator accepts any http(s) image URL for virtual media.
			"instance_info": map[string]any{"boot_iso": simURL + "/images/rivet-dev.iso"},
			"properties":    map[string]any{"cpu_arch": "x86_64"},
		})
		if err != nil {
			return err
		}
	case err != nil:
		return err
	default:
		if node.String("power_state") == "power on" {
			if err := bmc.SetPower(systemID, true); err != nil {
				return err
			}
		}
		// A restart may have moved the simulator: keep the address current.
		if addr, _ := node["driver_info"].(map[string]any); addr == nil || addr["redfish_address"] != simURL {
			ops := client.SetOps(map[string]any{"driver_info/redfish_address": simURL, "instance_info/boot_iso": simURL + "/images/rivet-dev.iso"})
			if node, err = cl.Update(ctx, client.Nodes, name, ops); err != nil {
				return err
			}
		}
	}
	steps := map[string]struct{ verb, then string }{
		"enroll":     {client.VerbManage, "manageable"},
		"manageable": {client.VerbProvide, "available"},
	}
	for {
		step, ok := steps[node.String("provision_state")]
		if !ok {
			return nil
		}
		if err := cl.SetProvisionState(ctx, name, client.ProvisionRequest{Target: step.verb}); err != nil {
			return err
		}
		if node, err = cl.WaitForProvisionState(ctx, name, client.WaitOptions{Target: step.then, Timeout: time.Minute, Interval: 100 * time.Millisecond}); err != nil {
			return err
		}
	}
}
