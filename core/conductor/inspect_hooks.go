package conductor

import (
	"context"
	"fmt"
	"net"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/rivetmetal/rivet/core/config"
	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/core/pyrepr"
	"github.com/rivetmetal/rivet/db"
)

// hookError is a hook's failure as Ironic raises it: a
// HardwareInspectionFailure (formatted, or with its message as given) or
// an InvalidNodeInventory. Inspection fails with its message.
type hookError struct {
	class string // HardwareInspectionFailure or InvalidNodeInventory
	msg   string
}

func (e *hookError) Error() string { return e.msg }

// hwFailure is Ironic's HardwareInspectionFailure(error=msg).
func hwFailure(format string, args ...any) error {
	return &hookError{class: "HardwareInspectionFailure", msg: "Failed to inspect hardware. Reason: " + fmt.Sprintf(format, args...)}
}

// hwFailureMsg is HardwareInspectionFailure(msg): the message as given.
func hwFailureMsg(format string, args ...any) error {
	return &hookError{class: "HardwareInspectionFailure", msg: fmt.Sprintf(format, args...)}
}

func invalidInventory(node, reason string) error {
	return &hookError{class: "InvalidNodeInventory", msg: fmt.Sprintf("Inventory for node %s is invalid: %s", node, reason)}
}

// inspectionHook is one of Ironic's inspection hooks (ironic/drivers/
// modules/inspector/hooks): preprocess runs for every hook first, then
// each hook's main part, in the configured order.
type inspectionHook struct {
	preprocess func(s *Service, t *Task, inv, pd map[string]any) error
	run        func(ctx context.Context, s *Service, t *Task, inv, pd map[string]any) error
}

var inspectionHooks = map[string]inspectionHook{
	"ramdisk-error":       {preprocess: hookRamdiskError},
	"validate-interfaces": {preprocess: hookValidateInterfaces},
	"ports":               {run: hookPorts},
	"architecture":        {run: hookArchitecture},
	"cpus":                {run: hookCPUs},
	"memory":              {run: hookMemory},
	"root-device":         {run: hookRootDevice},
	"boot-mode":           {run: hookBootMode},
}

// runInspectionHooks is Ironic's run_inspection_hooks: every enabled
// hook's preprocess, failures collected, then each hook; the error reads
// as the agent inspect interface wraps it.
func (s *Service) runInspectionHooks(ctx context.Context, t *Task, inv, pd map[string]any) error {
	names := s.cfg.Inspector.Hooks
	if len(names) == 0 {
		names = config.DefaultInspectionHooks
	}
	wrap := func(err error) error {
		return hwFailure("failed to run inspection hooks: %v", err)
	}
	var failures []string
	for _, name := range names {
		if h := inspectionHooks[name]; h.preprocess != nil {
			if err := h.preprocess(s, t, inv, pd); err != nil {
				if he, ok := err.(*hookError); ok && he.class == "HardwareInspectionFailure" {
					failures = append(failures, fmt.Sprintf("Error in preprocess hook %s: %v", name, err))
				} else {
					failures = append(failures, fmt.Sprintf("Unexpected exception %s during preprocess hook %s: %v", errClass(err), name, err))
				}
			}
		}
	}
	if len(failures) > 0 {
		return wrap(hwFailure("The following failures happened while running preprocess hooks for node %s:\n%s",
			t.Node.UUID, strings.Join(failures, "\n")))
	}
	for _, name := range names {
		if h := inspectionHooks[name]; h.run != nil {
			if err := h.run(ctx, s, t, inv, pd); err != nil {
				if he, ok := err.(*hookError); ok && he.class == "HardwareInspectionFailure" {
					return wrap(err)
				}
				return wrap(hwFailure("Unexpected exception %s during processing for node: %s. Error: %v", errClass(err), t.Node.UUID, err))
			}
		}
	}
	return nil
}

func errClass(err error) string {
	if he, ok := err.(*hookError); ok {
		return he.class
	}
	return "Exception"
}

func hookRamdiskError(_ *Service, _ *Task, _, pd map[string]any) error {
	if e := pd["error"]; e != nil && e != "" && e != false {
		return hwFailure("Ramdisk reported error: %v", e)
	}
	return nil
}

// normalMAC returns a MAC address lower-cased and colon-separated.
func normalMAC(s string) (string, bool) {
	hw, err := net.ParseMAC(strings.TrimSpace(s))
	if err != nil || len(hw) != 6 {
		return "", false
	}
	return hw.String(), true
}

// pxeMAC is Ironic's get_pxe_mac: inventory.boot.pxe_interface, which may
// be in BOOTIF form ("01-52-54-00-…").
func pxeMAC(inv map[string]any) string {
	boot, _ := inv["boot"].(map[string]any)
	p, _ := boot["pxe_interface"].(string)
	if p == "" {
		return ""
	}
	if _, rest, ok := strings.Cut(p, "-"); ok && strings.Count(p, "-") == 6 {
		p = strings.ReplaceAll(rest, "-", ":")
	}
	mac, _ := normalMAC(p)
	return mac
}

// hookValidateInterfaces is Ironic's validate-interfaces: plugin_data
// gets all_interfaces (name → interface with pxe_enabled), valid_interfaces
// (those [inspector] add_ports selects) and macs.
func hookValidateInterfaces(s *Service, t *Task, inv, pd map[string]any) error {
	node := t.Node.UUID
	list, ok := inv["interfaces"].([]any)
	if !ok {
		return invalidInventory(node, "no interfaces present in inventory")
	}
	pxe := pxeMAC(inv)
	all := map[string]any{}
	for _, raw := range list {
		iface, _ := raw.(map[string]any)
		name, _ := iface["name"].(string)
		macStr, _ := iface["mac_address"].(string)
		if name == "" || macStr == "" {
			continue
		}
		mac, ok := normalMAC(macStr)
		if !ok {
			t.log.Warn("inspection: interface with an invalid MAC address skipped", "interface", name)
			continue
		}
		out := make(map[string]any, len(iface)+1)
		for k, v := range iface {
			out[k] = v
		}
		ip6, _ := iface["ipv6_address"].(string)
		ip6, _, _ = strings.Cut(ip6, "%")
		out["mac_address"], out["pxe_enabled"] = mac, mac == pxe
		if ip6 == "" {
			out["ipv6_address"] = nil
		} else {
			out["ipv6_address"] = ip6
		}
		all[name] = out
	}
	if len(all) == 0 {
		return invalidInventory(node, "no valid network interfaces")
	}
	addPorts := addPortsMode(s)
	valid := map[string]any{}
	var macs []any
	for _, name := range sortedKeys(all) {
		iface := all[name].(map[string]any)
		ip, _ := iface["ipv4_address"].(string)
		if ip == "" {
			ip, _ = iface["ipv6_address"].(string)
		}
		if name == "lo" || (ip != "" && net.ParseIP(ip) != nil && net.ParseIP(ip).IsLoopback()) {
			continue
		}
		if addPorts == "pxe" && pxe != "" && iface["pxe_enabled"] != true {
			continue
		}
		if addPorts == "active" && ip == "" {
			continue
		}
		valid[name] = iface
		macs = append(macs, iface["mac_address"])
	}
	if len(valid) == 0 {
		return invalidInventory(node, fmt.Sprintf("no network interfaces match the configuration (add_ports set to %q)", addPorts))
	}
	pd["all_interfaces"], pd["valid_interfaces"], pd["macs"] = all, valid, macs
	return nil
}

func addPortsMode(s *Service) string {
	if m := s.cfg.Inspector.AddPorts; m != "" {
		return m
	}
	return "pxe"
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// hookPorts is Ironic's ports hook: a port for each valid interface
// (unless add_ports is disabled), then the node's ports brought in line:
// deleted per keep_ports, pxe_enabled set from the inventory
// (update_pxe_enabled), extra client-id updated.
func hookPorts(ctx context.Context, s *Service, t *Task, _, pd map[string]any) error {
	n := t.Node
	valid, _ := pd["valid_interfaces"].(map[string]any)
	all, _ := pd["all_interfaces"].(map[string]any)
	if valid == nil || all == nil {
		return hwFailureMsg("the ports hook needs validate-interfaces")
	}
	if addPortsMode(s) != "disabled" {
		for _, name := range sortedKeys(valid) {
			iface := valid[name].(map[string]any)
			extra := map[string]any{}
			if cid, _ := iface["client_id"].(string); cid != "" {
				extra["client-id"] = cid
			}
			port := &objects.Port{UUID: uuid.NewString(), Address: iface["mac_address"].(string), NodeID: n.ID,
				PXEEnabled: iface["pxe_enabled"] == true, Extra: extra, LocalLinkConnection: map[string]any{}, InternalInfo: map[string]any{}}
			if err := s.store.Create(ctx, port); err != nil {
				if db.IsUniqueViolation(err) {
					t.log.Info("port already exists for MAC address", "address", port.Address)
					continue
				}
				return err
			}
			t.log.Info("port created from inspection", "port", port.UUID, "address", port.Address, "pxe_enabled", port.PXEEnabled)
		}
	}
	var expected map[string]bool
	switch s.cfg.Inspector.KeepPorts {
	case "present":
		expected = macSet(all, nil)
	case "added":
		macs, _ := pd["macs"].([]any)
		expected = map[string]bool{}
		for _, m := range macs {
			expected[m.(string)] = true
		}
	}
	pxeMACs := macSet(all, func(iface map[string]any) bool { return iface["pxe_enabled"] == true })
	clientIDs := map[string]string{}
	for _, v := range all {
		iface := v.(map[string]any)
		cid, _ := iface["client_id"].(string)
		clientIDs[iface["mac_address"].(string)] = cid
	}
	objs, err := s.store.LoadAll(ctx, "Port", func(q *bun.SelectQuery) *bun.SelectQuery {
		return q.Where("?TableAlias.node_id = ?", n.ID).OrderExpr("?TableAlias.id ASC")
	})
	if err != nil {
		return err
	}
	for _, o := range objs {
		p := o.(*objects.Port)
		if len(expected) > 0 && !expected[p.Address] {
			t.log.Info("deleting port whose MAC address is not in the expected list", "port", p.UUID, "address", p.Address)
			if err := s.store.Delete(ctx, p); err != nil {
				return err
			}
			continue
		}
		changed := false
		if s.cfg.Inspector.UpdatePXEEnabled && p.PXEEnabled != pxeMACs[p.Address] {
			p.PXEEnabled, changed = pxeMACs[p.Address], true
		}
		if cid := clientIDs[p.Address]; cid != "" && p.Extra["client-id"] != cid {
			extra := cloneMap(p.Extra)
			extra["client-id"] = cid
			p.Extra, changed = extra, true
		}
		if changed {
			if err := s.store.Save(ctx, p); err != nil {
				return err
			}
		}
	}
	return nil
}

func macSet(ifaces map[string]any, keep func(map[string]any) bool) map[string]bool {
	out := map[string]bool{}
	for _, v := range ifaces {
		iface := v.(map[string]any)
		if keep == nil || keep(iface) {
			out[iface["mac_address"].(string)] = true
		}
	}
	return out
}

// setProperty sets one node property (a copy of the map: the node's maps
// are never changed in place).
func setProperty(n *objects.Node, key string, v any) {
	props := cloneMap(n.Properties)
	props[key] = v
	n.Properties = props
}

func hookArchitecture(_ context.Context, _ *Service, t *Task, inv, _ map[string]any) error {
	cpu, _ := inv["cpu"].(map[string]any)
	arch, ok := cpu["architecture"].(string)
	if !ok || arch == "" {
		return invalidInventory(t.Node.UUID, fmt.Sprintf("Inventory has malformed or missing CPU architecture information: %s for node %s.",
			pyrepr.Value(inv["cpu"]), t.Node.UUID))
	}
	setProperty(t.Node, "cpu_arch", arch)
	return nil
}

func hookCPUs(_ context.Context, _ *Service, t *Task, inv, _ map[string]any) error {
	cpu, _ := inv["cpu"].(map[string]any)
	count, _ := asInt(cpu["count"])
	if count == 0 {
		t.log.Warn("inspection: no CPU count available")
		return nil
	}
	setProperty(t.Node, "cpus", count)
	return nil
}

func hookMemory(_ context.Context, _ *Service, t *Task, inv, _ map[string]any) error {
	mem, _ := inv["memory"].(map[string]any)
	mb, ok := asInt(mem["physical_mb"])
	if !ok {
		return invalidInventory(t.Node.UUID, fmt.Sprintf("Inventory has missing memory information: %s for node %s.", pyrepr.Value(inv["memory"]), t.Node.UUID))
	}
	setProperty(t.Node, "memory_mb", mb)
	return nil
}

// hookRootDevice is Ironic's root-device hook: with root_device hints the
// matching inventory disk is the root disk (none matching fails), else the
// agent's own choice (plugin_data root_disk); local_gb is its size in GiB
// less one for partitioning (Ironic's disk_partitioning_spacing), 0 for no
// root disk.
func hookRootDevice(_ context.Context, _ *Service, t *Task, inv, pd map[string]any) error {
	n := t.Node
	if hints, _ := n.Properties["root_device"].(map[string]any); len(hints) > 0 {
		disks, _ := inv["disks"].([]any)
		var chosen map[string]any
		for _, d := range disks {
			disk, _ := d.(map[string]any)
			ok, err := matchRootDeviceHints(disk, hints)
			if err != nil {
				return hwFailureMsg("No disks could be found using root device hints %s for node %s because they failed to validate. Error: %v",
					pyrepr.Value(hints), n.UUID, err)
			}
			if ok {
				chosen = disk
				break
			}
		}
		if chosen == nil {
			return hwFailureMsg("No disks satisfied root device hints for node %s", n.UUID)
		}
		pd["root_disk"] = chosen
	}
	localGB := int64(0)
	if root, _ := pd["root_disk"].(map[string]any); root != nil {
		size, _ := asInt(root["size"])
		if localGB = size / (1 << 30); localGB == 0 {
			t.log.Warn("inspection: the root disk is smaller than 1 GiB or its size is unknown")
		} else {
			localGB--
		}
	}
	pd["local_gb"] = localGB
	setProperty(n, "local_gb", localGB)
	return nil
}

// rootHintKeys are Ironic's root device hints with their kinds.
var rootHintKeys = map[string]string{
	"size": "int", "model": "str", "vendor": "str", "serial": "str", "wwn": "str",
	"wwn_with_extension": "str", "wwn_vendor_extension": "str", "name": "str",
	"rotational": "bool", "hctl": "str", "by_path": "str",
}

// matchRootDeviceHints reports whether disk satisfies every hint: strings
// case-insensitively (an "s== x" operator form compares as written), size
// in GiB (an integer, or "<= N", ">= N", "== N"), rotational a boolean.
func matchRootDeviceHints(disk, hints map[string]any) (bool, error) {
	for k, want := range hints {
		kind, known := rootHintKeys[k]
		if !known {
			return false, fmt.Errorf("no such root device hint: %s", k)
		}
		got := disk[k]
		switch kind {
		case "int":
			size, _ := asInt(got)
			ok, err := matchSize(size/(1<<30), want)
			if err != nil || !ok {
				return false, err
			}
		case "bool":
			w, err := asBool(want)
			if err != nil {
				return false, fmt.Errorf("root device hint %s: %v", k, err)
			}
			if g, _ := got.(bool); g != w {
				return false, nil
			}
		default:
			ws, ok := want.(string)
			if !ok {
				return false, fmt.Errorf("root device hint %s must be a string", k)
			}
			gs, _ := got.(string)
			if k == "name" && !strings.HasPrefix(ws, "/dev/") {
				ws = "/dev/" + ws
			}
			ws = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(ws), "s=="))
			if !strings.EqualFold(gs, ws) {
				return false, nil
			}
		}
	}
	return true, nil
}

func matchSize(gib int64, want any) (bool, error) {
	if w, ok := asInt(want); ok {
		return gib == w, nil
	}
	s, _ := want.(string)
	s = strings.TrimSpace(s)
	for _, op := range []string{"<=", ">=", "==", "<", ">"} {
		if rest, ok := strings.CutPrefix(s, op); ok {
			w, err := strconv.ParseInt(strings.TrimSpace(rest), 10, 64)
			if err != nil {
				return false, fmt.Errorf("root device hint size: %q is not an integer", rest)
			}
			switch op {
			case "<=":
				return gib <= w, nil
			case ">=":
				return gib >= w, nil
			case "<":
				return gib < w, nil
			case ">":
				return gib > w, nil
			}
			return gib == w, nil
		}
	}
	w, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return false, fmt.Errorf("root device hint size: %q is not an integer", s)
	}
	return gib == w, nil
}

func asBool(v any) (bool, error) {
	switch b := v.(type) {
	case bool:
		return b, nil
	case string:
		return strconv.ParseBool(strings.TrimSpace(strings.TrimPrefix(b, "<is>")))
	}
	return false, fmt.Errorf("%v is not a boolean", v)
}

// hookBootMode is Ironic's boot-mode hook: capabilities gets
// boot_mode:<current_boot_mode>.
func hookBootMode(_ context.Context, _ *Service, t *Task, inv, _ map[string]any) error {
	boot, _ := inv["boot"].(map[string]any)
	mode, _ := boot["current_boot_mode"].(string)
	if mode == "" {
		t.log.Warn("inspection: no boot mode information available")
		return nil
	}
	setProperty(t.Node, "capabilities", updatedCapabilities(t.Node.Properties["capabilities"], map[string]string{"boot_mode": mode}))
	return nil
}

// updatedCapabilities is Ironic's get_updated_capabilities: the
// "key:value,key:value" string (or a dict) with the new values set, keys
// in their original order, new ones after.
func updatedCapabilities(old any, set map[string]string) string {
	var keys []string
	vals := map[string]string{}
	put := func(k, v string) {
		if _, ok := vals[k]; !ok {
			keys = append(keys, k)
		}
		vals[k] = v
	}
	switch o := old.(type) {
	case string:
		for _, kv := range strings.Split(o, ",") {
			if k, v, ok := strings.Cut(kv, ":"); ok && k != "" {
				put(k, v)
			}
		}
	case map[string]any:
		for _, k := range sortedKeys(o) {
			put(k, fmt.Sprint(o[k]))
		}
	}
	newKeys := make([]string, 0, len(set))
	for k := range set {
		newKeys = append(newKeys, k)
	}
	slices.Sort(newKeys)
	for _, k := range newKeys {
		put(k, set[k])
	}
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + ":" + vals[k]
	}
	return strings.Join(parts, ",")
}

func asInt(v any) (int64, bool) {
	switch n := v.(type) {
	case float64:
		return int64(n), n == float64(int64(n))
	case int:
		return int64(n), true
	case int64:
		return n, true
	case string:
		i, err := strconv.ParseInt(n, 10, 64)
		return i, err == nil
	}
	return 0, false
}
