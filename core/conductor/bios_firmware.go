package conductor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/db"
	"github.com/rivetmetal/rivet/plugins"
)

// The bios and firmware interfaces: their clean steps (listed as Ironic
// lists them, run through the interface's own calls) and the caches the
// conductor keeps of what they read (Ironic's cache_bios_settings and
// cache_firmware_components).

// Step names of the bios and firmware interfaces, as Ironic's.
const (
	stepApplyConfiguration = "apply_configuration"
	stepFactoryReset       = "factory_reset"
	stepFirmwareUpdate     = "update"
)

// interfaceSteps are the clean (and service) steps the bios and firmware
// interfaces offer, all with priority 0 (manual only), as Ironic's.
var interfaceSteps = []plugins.CleanStep{
	{Interface: plugins.InterfaceBIOS, Step: stepApplyConfiguration, Args: map[string]any{
		"settings": map[string]any{"description": "A list of BIOS settings to be applied", "required": true}}},
	{Interface: plugins.InterfaceBIOS, Step: stepFactoryReset},
	{Interface: plugins.InterfaceFirmware, Step: stepFirmwareUpdate, Args: map[string]any{
		"settings": map[string]any{"description": "A list of dicts with firmware components to be updated", "required": true}}},
}

// hwInterface returns the node's bios or firmware implementation on hw:
// ok when the node's <iface>_interface is not no-* and the driver serves
// it; otherwise the classed error Ironic answers (UnsupportedDriverExtension,
// 400), naming the driver.
func (s *Service) hwInterface(n *objects.Node, hw Hardware, iface plugins.Interface) (any, error) {
	if err := s.requireInterface(n, string(iface)); err != nil {
		return nil, err
	}
	var impl any
	var ok bool
	switch iface {
	case plugins.InterfaceBIOS:
		impl, ok = hw.(plugins.BIOSInterface)
	case plugins.InterfaceFirmware:
		impl, ok = hw.(plugins.FirmwareInterface)
	}
	if !ok {
		return nil, errUnsupported(n.Driver, string(iface))
	}
	return impl, nil
}

// interfaceStepsFor lists the bios and firmware steps node n can run: those
// of the interfaces it uses and its driver serves.
func (s *Service) interfaceStepsFor(n *objects.Node, hw Hardware) []plugins.CleanStep {
	var out []plugins.CleanStep
	for _, st := range interfaceSteps {
		if _, err := s.hwInterface(n, hw, st.Interface); err == nil {
			out = append(out, st)
		}
	}
	return out
}

// isInterfaceStep reports whether st belongs to the bios or firmware
// interface (run through that interface, not ExecuteCleanStep).
func isInterfaceStep(st plugins.CleanStep) bool {
	return st.Interface == plugins.InterfaceBIOS || st.Interface == plugins.InterfaceFirmware
}

// checkInterfaceSteps validates the bios and firmware steps of a manual
// clean before it starts: the node's interface must do something (else
// UnsupportedDriverExtension, 400: an older plugin without the interface
// lands here) and each step's name and arguments must be Ironic's (else
// InvalidParameterValue, 400).
func (s *Service) checkInterfaceSteps(n *objects.Node, hw Hardware, steps []plugins.CleanStep) error {
	for _, st := range steps {
		if !isInterfaceStep(st) {
			continue
		}
		if _, err := s.hwInterface(n, hw, st.Interface); err != nil {
			return err
		}
		if _, _, err := parseInterfaceStep(st); err != nil {
			return errInvalidParameter("%s", err.Error())
		}
	}
	return nil
}

// parseInterfaceStep reads a bios or firmware step's arguments.
func parseInterfaceStep(st plugins.CleanStep) ([]plugins.BIOSSettingValue, []plugins.FirmwareUpdate, error) {
	name := string(st.Interface) + "." + st.Step
	extra := func(allowed ...string) error {
		for k := range st.Args {
			if !slices.Contains(allowed, k) {
				return fmt.Errorf("step %s: unexpected argument %q (it takes %s)", name, k, strings.Join(append([]string{"none"}, allowed...)[min(len(allowed), 1):], ", "))
			}
		}
		return nil
	}
	list := func() ([]map[string]any, error) {
		raw, ok := st.Args["settings"].([]any)
		if !ok || len(raw) == 0 {
			return nil, fmt.Errorf("step %s: argument \"settings\" is required: a non-empty list", name)
		}
		out := make([]map[string]any, len(raw))
		for i, x := range raw {
			m, ok := x.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("step %s: settings[%d] is not an object", name, i)
			}
			out[i] = m
		}
		return out, nil
	}
	switch {
	case st.Interface == plugins.InterfaceBIOS && st.Step == stepFactoryReset:
		return nil, nil, extra()
	case st.Interface == plugins.InterfaceBIOS && st.Step == stepApplyConfiguration:
		if err := extra("settings"); err != nil {
			return nil, nil, err
		}
		items, err := list()
		if err != nil {
			return nil, nil, err
		}
		out := make([]plugins.BIOSSettingValue, 0, len(items))
		for i, m := range items {
			n, _ := m["name"].(string)
			v, has := m["value"]
			if n == "" || !has || v == nil {
				return nil, nil, fmt.Errorf("step %s: settings[%d] needs a \"name\" and a \"value\"", name, i)
			}
			out = append(out, plugins.BIOSSettingValue{Name: n, Value: scalarString(v)})
		}
		return out, nil, nil
	case st.Interface == plugins.InterfaceFirmware && st.Step == stepFirmwareUpdate:
		if err := extra("settings"); err != nil {
			return nil, nil, err
		}
		items, err := list()
		if err != nil {
			return nil, nil, err
		}
		out := make([]plugins.FirmwareUpdate, 0, len(items))
		for i, m := range items {
			for k := range m {
				if k != "component" && k != "url" && k != "wait" {
					return nil, nil, fmt.Errorf("step %s: settings[%d]: unexpected key %q (component, url, wait)", name, i, k)
				}
			}
			c, _ := m["component"].(string)
			if c != "bios" && c != "bmc" && !strings.HasPrefix(c, "nic:") {
				return nil, nil, fmt.Errorf("step %s: settings[%d]: \"component\" must be bios, bmc or nic:<id>, not %v", name, i, m["component"])
			}
			u, _ := m["url"].(string)
			if p, err := url.Parse(u); u == "" || err != nil || p.Scheme == "" {
				return nil, nil, fmt.Errorf("step %s: settings[%d]: \"url\" must be the firmware image's URL", name, i)
			}
			fu := plugins.FirmwareUpdate{Component: c, URL: u}
			if w, has := m["wait"]; has {
				secs, ok := wholeNumber(w)
				if !ok || secs < 1 {
					return nil, nil, fmt.Errorf("step %s: settings[%d]: \"wait\" must be a whole number of seconds, at least 1", name, i)
				}
				fu.Wait = time.Duration(secs) * time.Second
			}
			out = append(out, fu)
		}
		return nil, out, nil
	}
	return nil, nil, fmt.Errorf("step %s is not a step of the %s interface (it has %s): %w", name, st.Interface, stepNames(st.Interface), plugins.ErrNotSupported)
}

func stepNames(iface plugins.Interface) string {
	var names []string
	for _, st := range interfaceSteps {
		if st.Interface == iface {
			names = append(names, st.Step)
		}
	}
	return strings.Join(names, ", ")
}

// scalarString is a BIOS value as the driver takes it: strings as they
// are, numbers and booleans as JSON spells them.
func scalarString(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// wholeNumber reads a JSON number that is an integer.
func wholeNumber(v any) (int64, bool) {
	switch x := v.(type) {
	case float64:
		return int64(x), x == float64(int64(x))
	case json.Number:
		n, err := x.Int64()
		return n, err == nil
	case int:
		return int64(x), true
	case int64:
		return x, true
	}
	return 0, false
}

// executeCleanStep runs one step: a bios or firmware step through its
// interface, any other through the driver's ExecuteCleanStep.
func (s *Service) executeCleanStep(ctx context.Context, n *objects.Node, hw Hardware, pn plugins.Node, st plugins.CleanStep) error {
	if !isInterfaceStep(st) {
		return hw.ExecuteCleanStep(ctx, pn, st)
	}
	impl, err := s.hwInterface(n, hw, st.Interface)
	if err != nil {
		return err
	}
	settings, updates, err := parseInterfaceStep(st)
	if err != nil {
		return err
	}
	switch st.Step {
	case stepApplyConfiguration:
		return impl.(plugins.BIOSInterface).ApplyBIOSSettings(ctx, pn, settings)
	case stepFactoryReset:
		return impl.(plugins.BIOSInterface).FactoryResetBIOS(ctx, pn)
	default:
		return impl.(plugins.FirmwareInterface).UpdateFirmware(ctx, pn, updates)
	}
}

// afterStep refreshes the cache a bios or firmware step changed, as
// Ironic's cache_bios_settings and cache_firmware_components decorators.
func (s *Service) afterStep(ctx context.Context, t *Task, st plugins.CleanStep) {
	switch st.Interface {
	case plugins.InterfaceBIOS:
		s.cacheBIOS(ctx, t)
	case plugins.InterfaceFirmware:
		var flashed []string
		if _, updates, err := parseInterfaceStep(st); err == nil {
			for _, u := range updates {
				flashed = append(flashed, u.Component)
			}
		}
		s.cacheFirmware(ctx, t, flashed)
	}
}

// updateCache refreshes both caches (Ironic's node_update_cache, run when
// cleaning starts and ends and when a node is verified).
func (s *Service) updateCache(ctx context.Context, t *Task) {
	s.cacheBIOS(ctx, t)
	s.cacheFirmware(ctx, t, nil)
}

// cacheable says whether the node uses iface and the effective release
// has the object kind that caches it; nothing is read or written while
// pinned to a release without it.
func (s *Service) cacheable(t *Task, hw Hardware, iface plugins.Interface, kind string) (any, bool) {
	if _, ok := s.pinner.Effective().ObjectVersion(kind); !ok {
		return nil, false
	}
	impl, err := s.hwInterface(t.Node, hw, iface)
	return impl, err == nil
}

// cacheBIOS reads the node's BIOS settings into the bios_settings cache.
// It never fails the operation it follows: a failure is logged, as
// Ironic's node_cache_bios_settings.
func (s *Service) cacheBIOS(ctx context.Context, t *Task) {
	hw, err := s.hardware(t.Node)
	if err != nil {
		return
	}
	impl, ok := s.cacheable(t, hw, plugins.InterfaceBIOS, "BIOSSetting")
	if !ok {
		return
	}
	var read []plugins.BIOSSetting
	err = s.driverCall(ctx, t.Node, "get BIOS settings", func(ctx context.Context, pn plugins.Node) (err error) {
		read, err = impl.(plugins.BIOSInterface).GetBIOSSettings(ctx, pn)
		return err
	})
	if err == nil {
		settings := make([]*objects.BIOSSetting, 0, len(read))
		for _, r := range read {
			bs := &objects.BIOSSetting{Name: r.Name, Value: r.Value, AllowableValues: r.AllowableValues,
				LowerBound: r.LowerBound, UpperBound: r.UpperBound, MinLength: r.MinLength, MaxLength: r.MaxLength,
				ReadOnly: r.ReadOnly, ResetRequired: r.ResetRequired, Unique: r.Unique}
			if r.AttributeType != "" {
				bs.AttributeType = ptr(r.AttributeType)
			}
			settings = append(settings, bs)
		}
		err = s.store.SyncBIOSSettings(ctx, t.Node.ID, settings)
	}
	switch {
	case errors.Is(err, plugins.ErrNotSupported):
		t.log.Warn("BIOS settings are not supported for the node; skipping", "error", err)
	case err != nil:
		t.log.Error("caching of BIOS settings failed", "error", err)
	}
}

// cacheFirmware reads the node's firmware components into the
// firmware_information cache; flashed names the components an update step
// just flashed. Like cacheBIOS it only logs a failure.
func (s *Service) cacheFirmware(ctx context.Context, t *Task, flashed []string) {
	hw, err := s.hardware(t.Node)
	if err != nil {
		return
	}
	impl, ok := s.cacheable(t, hw, plugins.InterfaceFirmware, "FirmwareComponent")
	if !ok {
		return
	}
	var read []plugins.FirmwareComponent
	err = s.driverCall(ctx, t.Node, "list firmware components", func(ctx context.Context, pn plugins.Node) (err error) {
		read, err = impl.(plugins.FirmwareInterface).ListFirmwareComponents(ctx, pn)
		return err
	})
	if err == nil {
		readings := make([]db.FirmwareReading, 0, len(read))
		for _, c := range read {
			readings = append(readings, db.FirmwareReading{Component: c.Component, CurrentVersion: c.CurrentVersion})
		}
		err = s.store.SyncFirmwareComponents(ctx, t.Node.ID, readings, flashed)
	}
	switch {
	case errors.Is(err, plugins.ErrNotSupported):
		t.log.Warn("firmware components are not supported for the node; skipping", "error", err)
	case err != nil:
		t.log.Error("caching of firmware components failed", "error", err)
	}
}
