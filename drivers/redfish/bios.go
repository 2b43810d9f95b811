package redfish

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/stmcginnis/gofish"
	"github.com/stmcginnis/gofish/schemas"

	"github.com/rivetmetal/rivet/plugins"
)

// The bios interface (version 1) over the system's Bios resource, its
// @Redfish.Settings object and the attribute registry it names, found in
// the service's Registries collection (Ironic's redfish bios interface).

var _ plugins.BIOSInterface = (*Driver)(nil)

// getJSON reads one resource into v.
func getJSON(c *gofish.APIClient, uri string, v any) error {
	resp, err := c.Get(uri)
	if err != nil {
		return err
	}
	defer schemas.DeferredCleanupHTTPResponse(resp)
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		return fmt.Errorf("decode %s: %w", uri, err)
	}
	return nil
}

type odataLink struct {
	ID string `json:"@odata.id"`
}

// biosResource is what the driver reads of a Bios resource.
type biosResource struct {
	Attributes        map[string]json.RawMessage
	AttributeRegistry string
	Settings          struct {
		SettingsObject      odataLink
		SupportedApplyTimes []string
	} `json:"@Redfish.Settings"`
	ResetPending *bool `json:"ResetBiosToDefaultsPending"`
	Actions      map[string]struct {
		Target string `json:"target"`
	}
}

// registryLocation is one Location of a MessageRegistryFile.
type registryLocation struct {
	Language string
	URI      string `json:"Uri"`
}

// registryAttr is one AttributeRegistry entry.
type registryAttr struct {
	AttributeName string
	Type          string
	Value         []struct{ ValueName, ValueDisplayName string }
	LowerBound    *int64
	UpperBound    *int64
	MinLength     *int64
	MaxLength     *int64
	ReadOnly      *bool
	ResetRequired *bool
	Unique        *bool
}

// biosPath is the system's Bios link.
func (t target) biosPath() (string, error) {
	var sys struct{ Bios odataLink }
	if err := getJSON(t.c, t.path, &sys); err != nil {
		return "", err
	}
	if sys.Bios.ID == "" {
		return "", fmt.Errorf("the system has no Bios resource; BIOS settings are not supported: %w", plugins.ErrNotSupported)
	}
	return sys.Bios.ID, nil
}

func (t target) bios() (string, biosResource, error) {
	p, err := t.biosPath()
	if err != nil {
		return "", biosResource{}, err
	}
	var b biosResource
	err = getJSON(t.c, p, &b)
	return p, b, err
}

// registry finds the attribute registry named name in the Registries
// collection: the member whose id ends in the name first, else every file
// whose Registry is the name. A BMC without one answers nil.
func (t target) registry(name string) ([]registryAttr, error) {
	if name == "" {
		return nil, nil
	}
	var root struct{ Registries odataLink }
	if err := getJSON(t.c, "/redfish/v1/", &root); err != nil {
		return nil, err
	}
	if root.Registries.ID == "" {
		return nil, nil
	}
	var coll struct{ Members []odataLink }
	if err := getJSON(t.c, root.Registries.ID, &coll); err != nil {
		return nil, err
	}
	slices.SortStableFunc(coll.Members, func(a, b odataLink) int { // the likely one first
		return boolRank(path.Base(b.ID) == name) - boolRank(path.Base(a.ID) == name)
	})
	for _, m := range coll.Members {
		var f struct {
			Registry string
			Location []registryLocation
		}
		if err := getJSON(t.c, m.ID, &f); err != nil {
			return nil, err
		}
		if f.Registry != name && !strings.HasPrefix(name, f.Registry+".") && path.Base(m.ID) != name {
			continue
		}
		i := slices.IndexFunc(f.Location, func(l registryLocation) bool {
			return l.URI != "" && (l.Language == "en" || l.Language == "")
		})
		if i < 0 {
			i = slices.IndexFunc(f.Location, func(l registryLocation) bool { return l.URI != "" })
		}
		if i < 0 {
			return nil, nil
		}
		var reg struct {
			RegistryEntries struct{ Attributes []registryAttr }
		}
		if err := getJSON(t.c, f.Location[i].URI, &reg); err != nil {
			return nil, err
		}
		return reg.RegistryEntries.Attributes, nil
	}
	return nil, nil
}

func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
}

// settingValue is a Redfish attribute value as Ironic stores it: a string
// as is, a number in decimal, a boolean as "True"/"False" (Python's str),
// null as nil.
func settingValue(raw json.RawMessage) *string {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil || v == nil {
		return nil
	}
	var s string
	switch x := v.(type) {
	case string:
		s = x
	case bool:
		s = "False"
		if x {
			s = "True"
		}
	case json.Number:
		s = x.String()
	default:
		s = string(bytes.TrimSpace(raw))
	}
	return &s
}

// GetBIOSSettings implements plugins.BIOSInterface: the current attributes,
// each with its registry entry's facts (Ironic's cache_bios_settings). A
// registry that cannot be read is logged and left out, as Ironic does.
func (d *Driver) GetBIOSSettings(ctx context.Context, node plugins.Node) ([]plugins.BIOSSetting, error) {
	var out []plugins.BIOSSetting
	err := d.call(ctx, node, "get BIOS settings", func(t target) error {
		_, b, err := t.bios()
		if err != nil {
			return err
		}
		reg, rerr := t.registry(b.AttributeRegistry)
		switch classify(ctx, rerr) {
		case failNone:
		case failNoAnswer, failCaller, failQueue, failAuth:
			return rerr
		default:
			t.logger.Info("BIOS attribute registry unreadable; settings cached without it", "registry", b.AttributeRegistry,
				"error", scrub(rerr.Error(), t.ni.secrets))
			reg = nil
		}
		byName := make(map[string]registryAttr, len(reg))
		for _, a := range reg {
			byName[a.AttributeName] = a
		}
		out = make([]plugins.BIOSSetting, 0, len(b.Attributes))
		for _, name := range slices.Sorted(maps.Keys(b.Attributes)) {
			st := plugins.BIOSSetting{Name: name, Value: settingValue(b.Attributes[name])}
			if a, ok := byName[name]; ok {
				st.AttributeType, st.LowerBound, st.UpperBound = a.Type, a.LowerBound, a.UpperBound
				st.MinLength, st.MaxLength = a.MinLength, a.MaxLength
				st.ReadOnly, st.ResetRequired, st.Unique = a.ReadOnly, a.ResetRequired, a.Unique
				for _, v := range a.Value {
					if n := cmp.Or(v.ValueName, v.ValueDisplayName); n != "" {
						st.AllowableValues = append(st.AllowableValues, n)
					}
				}
			}
			out = append(out, st)
		}
		return nil
	})
	return out, err
}

// typedValue converts a requested value (a string, as Ironic takes it) to
// the JSON type the attribute has: from the registry, else from the
// current value's type. It refuses what the registry forbids.
func typedValue(name, value string, a *registryAttr, current json.RawMessage) (any, error) {
	typ := ""
	if a != nil {
		typ = a.Type
		if a.ReadOnly != nil && *a.ReadOnly {
			return nil, fmt.Errorf("BIOS setting %s is read-only", name)
		}
	} else {
		switch c := strings.TrimSpace(string(current)); {
		case c == "true" || c == "false":
			typ = "Boolean"
		case c != "" && c != "null" && c[0] != '"':
			typ = "Integer"
		}
	}
	switch typ {
	case "Integer":
		n, err := strconv.ParseInt(strings.TrimSpace(value), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("BIOS setting %s takes an integer, not %q", name, value)
		}
		if a != nil && ((a.LowerBound != nil && n < *a.LowerBound) || (a.UpperBound != nil && n > *a.UpperBound)) {
			return nil, fmt.Errorf("BIOS setting %s: %d is outside %s..%s", name, n, bound(a.LowerBound), bound(a.UpperBound))
		}
		return n, nil
	case "Boolean":
		b, err := strconv.ParseBool(strings.ToLower(strings.TrimSpace(value)))
		if err != nil {
			return nil, fmt.Errorf("BIOS setting %s takes true or false, not %q", name, value)
		}
		return b, nil
	case "Enumeration":
		if a != nil && len(a.Value) > 0 && !slices.ContainsFunc(a.Value, func(v struct{ ValueName, ValueDisplayName string }) bool {
			return cmp.Or(v.ValueName, v.ValueDisplayName) == value
		}) {
			var names []string
			for _, v := range a.Value {
				names = append(names, cmp.Or(v.ValueName, v.ValueDisplayName))
			}
			return nil, fmt.Errorf("BIOS setting %s takes one of %s, not %q", name, strings.Join(names, ", "), value)
		}
	case "String":
		if a != nil && ((a.MinLength != nil && int64(len(value)) < *a.MinLength) || (a.MaxLength != nil && int64(len(value)) > *a.MaxLength)) {
			return nil, fmt.Errorf("BIOS setting %s: a length of %d is outside %s..%s", name, len(value), bound(a.MinLength), bound(a.MaxLength))
		}
	}
	return value, nil
}

func bound(p *int64) string {
	if p == nil {
		return ""
	}
	return strconv.FormatInt(*p, 10)
}

// ApplyBIOSSettings implements plugins.BIOSInterface: the settings are
// checked against the registry, PATCHed to the settings object (apply
// time OnReset when the BMC offers it; with If-Match when the object has
// an ETag), and the node is rebooted; the
// call returns once the Bios resource reads them, then puts a node that
// was off back off. Settings that already read as asked change nothing
// and cost no reboot (as Ironic).
func (d *Driver) ApplyBIOSSettings(ctx context.Context, node plugins.Node, settings []plugins.BIOSSettingValue) error {
	if len(settings) == 0 {
		return fmt.Errorf("driver redfish: node %s: apply BIOS settings: no settings given: %w", node.UUID, plugins.ErrNotSupported)
	}
	want := map[string]any{}
	var wasOff, nothing bool
	err := d.call(ctx, node, "apply BIOS settings", func(t target) error {
		_, b, err := t.bios()
		if err != nil {
			return err
		}
		reg, rerr := t.registry(b.AttributeRegistry)
		if rerr != nil {
			t.logger.Info("BIOS attribute registry unreadable; values typed after the current ones", "error", scrub(rerr.Error(), t.ni.secrets))
		}
		byName := map[string]*registryAttr{}
		for i := range reg {
			byName[reg[i].AttributeName] = &reg[i]
		}
		var problems []string
		nothing = true
		for _, s := range settings {
			cur, known := b.Attributes[s.Name]
			if !known && byName[s.Name] == nil {
				problems = append(problems, fmt.Sprintf("the BIOS has no setting %s", s.Name))
				continue
			}
			v, err := typedValue(s.Name, s.Value, byName[s.Name], cur)
			if err != nil {
				problems = append(problems, err.Error())
				continue
			}
			want[s.Name] = v
			if cv := settingValue(cur); cv == nil || !sameValue(*cv, s.Value) {
				nothing = false
			}
		}
		if len(problems) > 0 {
			return fmt.Errorf("%s: %w", strings.Join(problems, "; "), plugins.ErrNotSupported)
		}
		if nothing {
			return nil
		}
		if b.Settings.SettingsObject.ID == "" {
			return fmt.Errorf("the Bios resource has no @Redfish.Settings object to write: %w", plugins.ErrNotSupported)
		}
		body := map[string]any{"Attributes": want}
		if slices.Contains(b.Settings.SupportedApplyTimes, "OnReset") {
			body["@Redfish.SettingsApplyTime"] = map[string]string{"ApplyTime": "OnReset"}
		}
		// A BMC that versions the settings object wants its ETag back.
		var headers map[string]string
		var so struct {
			ETag string `json:"@odata.etag"`
		}
		if getJSON(t.c, b.Settings.SettingsObject.ID, &so) == nil && so.ETag != "" {
			headers = map[string]string{"If-Match": so.ETag}
		}
		resp, err := t.c.PatchWithHeaders(b.Settings.SettingsObject.ID, body, headers)
		if err != nil {
			return err
		}
		schemas.DeferredCleanupHTTPResponse(resp)
		wasOff, err = t.poweredOff()
		return err
	})
	if err != nil || nothing {
		return err
	}
	return d.rebootUntil(ctx, node, "apply BIOS settings", wasOff, func(b biosResource) error {
		var stale []string
		for _, name := range slices.Sorted(maps.Keys(want)) {
			got := settingValue(b.Attributes[name])
			if got == nil || !sameValue(*got, fmt.Sprint(want[name])) {
				stale = append(stale, fmt.Sprintf("%s reads %s, not %v", name, deref(got), want[name]))
			}
		}
		if len(stale) > 0 {
			return errors.New("BIOS settings not applied after a reboot: " + strings.Join(stale, "; "))
		}
		return nil
	})
}

func deref(p *string) string {
	if p == nil {
		return "null"
	}
	return *p
}

// sameValue compares a stored value with a requested one; booleans compare
// without case ("True" and "true").
func sameValue(stored, requested string) bool {
	if stored == requested {
		return true
	}
	sb, err1 := strconv.ParseBool(strings.ToLower(stored))
	rb, err2 := strconv.ParseBool(strings.ToLower(requested))
	return err1 == nil && err2 == nil && sb == rb
}

// FactoryResetBIOS implements plugins.BIOSInterface: Bios.ResetBios, a
// reboot, and a wait until the BMC no longer reports the reset pending.
func (d *Driver) FactoryResetBIOS(ctx context.Context, node plugins.Node) error {
	var wasOff bool
	err := d.call(ctx, node, "factory reset BIOS", func(t target) error {
		p, b, err := t.bios()
		if err != nil {
			return err
		}
		target := p + "/Actions/Bios.ResetBios"
		if a, ok := b.Actions["#Bios.ResetBios"]; ok && a.Target != "" {
			target = a.Target
		}
		resp, err := t.c.Post(target, map[string]any{})
		if err != nil {
			return err
		}
		schemas.DeferredCleanupHTTPResponse(resp)
		wasOff, err = t.poweredOff()
		return err
	})
	if err != nil {
		return err
	}
	return d.rebootUntil(ctx, node, "factory reset BIOS", wasOff, func(b biosResource) error {
		if b.ResetPending != nil && *b.ResetPending {
			return errors.New("the BIOS still reports its reset to defaults pending after a reboot")
		}
		return nil
	})
}

// poweredOff reads whether the system is off now (rebootUntil powers a
// node that was off back off).
func (t target) poweredOff() (bool, error) {
	sys, err := t.system()
	if err != nil {
		return false, err
	}
	return powerOf(sys.PowerState) == plugins.PowerOff, nil
}

// biosSettleTimeout is the least rebootUntil waits for the BIOS to apply
// its pending settings: a server's POST with a settings change takes
// minutes, longer than a power change.
const biosSettleTimeout = 15 * time.Minute

// rebootUntil reboots the node (powers it on when off), waits for it to be
// on, then reads the Bios resource until done accepts it or
// biosSettleTimeout (or the node's longer power_state_change_timeout)
// passes; a node that was off is powered off again.
func (d *Driver) rebootUntil(ctx context.Context, node plugins.Node, op string, wasOff bool, done func(biosResource) error) error {
	if err := d.restart(ctx, node, op, actRestart, 0); err != nil {
		return err
	}
	start := time.Now()
	pause := d.opts.PowerPollInterval
	for {
		var last error
		var limit time.Duration
		err := d.call(ctx, node, op, func(t target) error {
			limit = max(t.ni.powerTimeout, biosSettleTimeout)
			_, b, err := t.bios()
			if err != nil {
				return err
			}
			last = done(b)
			return nil
		})
		if err != nil {
			return err
		}
		if last == nil {
			break
		}
		if time.Since(start)+pause > limit {
			return fmt.Errorf("driver redfish: node %s: %s: %w", node.UUID, op, last)
		}
		tm := time.NewTimer(pause)
		select {
		case <-tm.C:
		case <-ctx.Done():
			tm.Stop()
			return fmt.Errorf("driver redfish: node %s: %s: %w", node.UUID, op, ctx.Err())
		}
		pause = min(pause*3/2, 4*d.opts.PowerPollInterval)
	}
	if wasOff {
		return d.switchPower(ctx, node, op, schemas.OffPowerState, actOff, 0)
	}
	return nil
}
