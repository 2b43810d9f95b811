package redfish

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/stmcginnis/gofish/schemas"

	"github.com/rivetmetal/rivet/plugins"
)

// The firmware interface (version 1): components as Ironic's redfish
// firmware interface reads them ("bios" from the System's BiosVersion,
// "bmc" from its Manager's FirmwareVersion, "nic:<serial or id>" from the
// chassis' NetworkAdapters), and updates through the UpdateService's
// SimpleUpdate from an http(s) URL, followed through the Task the BMC
// returns.

var _ plugins.FirmwareInterface = (*Driver)(nil)

// Firmware component names, as Ironic's redfish utils.
const (
	ComponentBIOS = "bios"
	ComponentBMC  = "bmc"
	NICPrefix     = "nic:"
)

// firmwareTaskTimeout bounds the wait for one update's Task.
const firmwareTaskTimeout = time.Hour

type systemLinks struct {
	BiosVersion string
	Links       struct {
		ManagedBy []odataLink
		Chassis   []odataLink
	}
}

// ListFirmwareComponents implements plugins.FirmwareInterface.
func (d *Driver) ListFirmwareComponents(ctx context.Context, node plugins.Node) ([]plugins.FirmwareComponent, error) {
	var out []plugins.FirmwareComponent
	err := d.call(ctx, node, "list firmware components", func(t target) error {
		var sys systemLinks
		if err := getJSON(t.c, t.path, &sys); err != nil {
			return err
		}
		if sys.BiosVersion != "" {
			out = append(out, plugins.FirmwareComponent{Component: ComponentBIOS, CurrentVersion: sys.BiosVersion})
		}
		if len(sys.Links.ManagedBy) > 0 {
			var m struct{ FirmwareVersion string }
			if err := getJSON(t.c, sys.Links.ManagedBy[0].ID, &m); err != nil {
				return err
			}
			if m.FirmwareVersion != "" {
				out = append(out, plugins.FirmwareComponent{Component: ComponentBMC, CurrentVersion: m.FirmwareVersion})
			}
		}
		nics, err := t.nicFirmware(sys)
		switch classify(ctx, err) {
		case failNone:
		case failNoAnswer, failCaller, failQueue, failAuth:
			return err
		default:
			t.logger.Info("NetworkAdapters unreadable; NIC firmware left out", "error", scrub(err.Error(), t.ni.secrets))
		}
		out = append(out, nics...)
		if len(out) == 0 {
			return fmt.Errorf("the BMC reports no firmware version for the BIOS, the BMC or a NIC: %w", plugins.ErrNotSupported)
		}
		return nil
	})
	return out, err
}

// nicFirmware reads each network adapter's controllers' firmware package
// versions from the system's first chassis.
func (t target) nicFirmware(sys systemLinks) ([]plugins.FirmwareComponent, error) {
	if len(sys.Links.Chassis) == 0 {
		return nil, nil
	}
	var ch struct{ NetworkAdapters odataLink }
	if err := getJSON(t.c, sys.Links.Chassis[0].ID, &ch); err != nil {
		return nil, err
	}
	if ch.NetworkAdapters.ID == "" {
		return nil, nil
	}
	var coll struct{ Members []odataLink }
	if err := getJSON(t.c, ch.NetworkAdapters.ID, &coll); err != nil {
		return nil, err
	}
	var out []plugins.FirmwareComponent
	for _, m := range coll.Members {
		var na struct {
			ID           string `json:"Id"`
			SerialNumber string
			Controllers  []struct{ FirmwarePackageVersion string }
		}
		if err := getJSON(t.c, m.ID, &na); err != nil {
			return nil, err
		}
		id := cmp.Or(na.SerialNumber, na.ID)
		for _, c := range na.Controllers {
			if c.FirmwarePackageVersion != "" {
				out = append(out, plugins.FirmwareComponent{Component: NICPrefix + id, CurrentVersion: c.FirmwarePackageVersion})
				break
			}
		}
	}
	return out, nil
}

// CheckFirmwareUpdates validates the update step's settings as Ironic's
// schema does: at least one item, each with a component ("bios", "bmc" or
// "nic:<id>") and an http(s) URL.
func CheckFirmwareUpdates(updates []plugins.FirmwareUpdate) error {
	if len(updates) == 0 {
		return fmt.Errorf("no firmware updates given: %w", plugins.ErrNotSupported)
	}
	for i, u := range updates {
		if u.Component != ComponentBIOS && u.Component != ComponentBMC && !strings.HasPrefix(u.Component, NICPrefix) {
			return fmt.Errorf("update %d: unknown firmware component %q (bios, bmc or nic:<id>): %w", i, u.Component, plugins.ErrNotSupported)
		}
		p, err := url.Parse(u.URL)
		if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
			return fmt.Errorf("update %d (%s): the image URL must be http or https: %w", i, u.Component, plugins.ErrNotSupported)
		}
	}
	return nil
}

// UpdateFirmware implements plugins.FirmwareInterface: for each update, a
// SimpleUpdate naming the component's FirmwareInventory item when the BMC
// lists one, a wait for its Task, a reboot after a BIOS or NIC image
// (which apply on reset), and the update's own wait; a node that was off
// and was rebooted is powered off again.
func (d *Driver) UpdateFirmware(ctx context.Context, node plugins.Node, updates []plugins.FirmwareUpdate) error {
	if err := CheckFirmwareUpdates(updates); err != nil {
		return fmt.Errorf("driver redfish: node %s: update firmware: %w", node.UUID, err)
	}
	before, err := d.GetPowerState(ctx, node)
	if err != nil {
		return err
	}
	rebooted := false
	for _, u := range updates {
		op := "update firmware " + u.Component
		var monitor string
		err := d.call(ctx, node, op, func(t target) error {
			var err error
			monitor, err = t.simpleUpdate(u)
			return err
		})
		if err != nil {
			return err
		}
		if monitor != "" {
			if err := d.waitTask(ctx, node, op, monitor); err != nil {
				return err
			}
		}
		if u.Component != ComponentBMC {
			if err := d.restart(ctx, node, op, actRestart, 0); err != nil {
				return err
			}
			rebooted = true
		}
		if u.Wait > 0 {
			tm := time.NewTimer(u.Wait)
			select {
			case <-tm.C:
			case <-ctx.Done():
				tm.Stop()
				return fmt.Errorf("driver redfish: node %s: %s: %w", node.UUID, op, ctx.Err())
			}
		}
	}
	if rebooted && before == plugins.PowerOff {
		return d.switchPower(ctx, node, "update firmware", schemas.OffPowerState, actOff, 0)
	}
	return nil
}

// simpleUpdate posts the update and returns the URI to follow (the Task
// or task monitor of the Location header, else the Task in the body).
func (t target) simpleUpdate(u plugins.FirmwareUpdate) (string, error) {
	var root struct{ UpdateService odataLink }
	if err := getJSON(t.c, "/redfish/v1/", &root); err != nil {
		return "", err
	}
	if root.UpdateService.ID == "" {
		return "", fmt.Errorf("the BMC has no UpdateService: %w", plugins.ErrNotSupported)
	}
	var us struct {
		FirmwareInventory odataLink
		Actions           map[string]struct {
			Target string `json:"target"`
		}
	}
	if err := getJSON(t.c, root.UpdateService.ID, &us); err != nil {
		return "", err
	}
	act, ok := us.Actions["#UpdateService.SimpleUpdate"]
	if !ok || act.Target == "" {
		return "", fmt.Errorf("the UpdateService has no SimpleUpdate action: %w", plugins.ErrNotSupported)
	}
	body := map[string]any{"ImageURI": u.URL}
	if p, err := url.Parse(u.URL); err == nil {
		body["TransferProtocol"] = strings.ToUpper(p.Scheme)
	}
	if item, err := t.firmwareItem(us.FirmwareInventory.ID, u.Component); err != nil {
		return "", err
	} else if item != "" {
		body["Targets"] = []string{item}
	}
	resp, err := t.c.Post(act.Target, body)
	if err != nil {
		return "", err
	}
	defer schemas.DeferredCleanupHTTPResponse(resp)
	if loc := resp.Header.Get("Location"); loc != "" {
		if p, err := url.Parse(loc); err == nil && p.Path != "" {
			return p.RequestURI(), nil
		}
	}
	var task struct {
		ID string `json:"@odata.id"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&task)
	return task.ID, nil
}

// firmwareItem finds the FirmwareInventory item of component for this
// system: BIOS items relate to the System, BMC items to its Manager. ""
// when none is told apart (the BMC then picks from the image, as Ironic
// leaves it).
func (t target) firmwareItem(inventory, component string) (string, error) {
	if inventory == "" || strings.HasPrefix(component, NICPrefix) {
		return "", nil
	}
	var sys systemLinks
	if err := getJSON(t.c, t.path, &sys); err != nil {
		return "", err
	}
	related := []string{t.path}
	if component == ComponentBMC {
		related = nil
		for _, m := range sys.Links.ManagedBy {
			related = append(related, m.ID)
		}
	}
	var coll struct{ Members []odataLink }
	if err := getJSON(t.c, inventory, &coll); err != nil {
		return "", err
	}
	var byName []string
	for _, m := range coll.Members {
		var item struct {
			ID          string `json:"Id"`
			RelatedItem []odataLink
		}
		if err := getJSON(t.c, m.ID, &item); err != nil {
			return "", err
		}
		if slices.ContainsFunc(item.RelatedItem, func(l odataLink) bool { return slices.Contains(related, strings.TrimSuffix(l.ID, "/")) }) &&
			strings.Contains(strings.ToUpper(item.ID+path.Base(m.ID)), strings.ToUpper(component)) {
			return m.ID, nil
		}
		if strings.EqualFold(item.ID, component) {
			byName = append(byName, m.ID)
		}
	}
	if len(byName) == 1 {
		return byName[0], nil
	}
	return "", nil
}

// waitTask follows a Task (or task monitor) until it ends: Completed is
// success; Exception, Killed or Cancelled fail with the Task's messages.
func (d *Driver) waitTask(ctx context.Context, node plugins.Node, op, uri string) error {
	start := time.Now()
	pause := d.opts.PowerPollInterval
	for {
		var state, messages string
		err := d.call(ctx, node, op, func(t target) error {
			resp, err := t.c.Get(uri)
			if err != nil {
				return err
			}
			defer schemas.DeferredCleanupHTTPResponse(resp)
			var task struct {
				TaskState string
				Messages  []struct {
					Message   string
					MessageID string `json:"MessageId"`
				}
			}
			if err := json.NewDecoder(resp.Body).Decode(&task); err != nil && resp.StatusCode != 202 && resp.StatusCode != 204 {
				return fmt.Errorf("decode task %s: %w", uri, err)
			}
			state = task.TaskState
			if state == "" && resp.StatusCode == 204 {
				state = "Completed" // a task monitor done without a body
			}
			var ms []string
			for _, m := range task.Messages {
				ms = append(ms, cmp.Or(m.Message, m.MessageID))
			}
			messages = strings.Join(ms, " ")
			return nil
		})
		if err != nil {
			return err
		}
		switch state {
		case "Completed":
			return nil
		case "Exception", "Killed", "Cancelled", "Interrupted":
			return &Error{Node: node.UUID, Op: op, msg: fmt.Sprintf("the BMC's update task %s ended %s: %s", uri, state, messages)}
		}
		if time.Since(start)+pause > firmwareTaskTimeout {
			return errors.New("driver redfish: node " + node.UUID + ": " + op + ": the update task " + uri + " did not finish within " + firmwareTaskTimeout.String())
		}
		tm := time.NewTimer(pause)
		select {
		case <-tm.C:
		case <-ctx.Done():
			tm.Stop()
			return fmt.Errorf("driver redfish: node %s: %s: waiting for task %s: %w", node.UUID, op, uri, ctx.Err())
		}
		pause = min(pause*3/2, 4*d.opts.PowerPollInterval)
	}
}
