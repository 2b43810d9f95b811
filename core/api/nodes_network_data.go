package api

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/core/version"
)

// The node's network_data (API 1.66, Node 1.2): a static network
// configuration in OpenStack's network_data.json layout, which the config
// drive carries when a deploy's configdrive object has none. POST and
// PATCH take it from 1.66 (406 below, as every newer node field); it is
// null or {} (unset), or a document of Ironic's network data schema:
// "links", "networks" and "services" lists, each entry with the keys its
// kind requires. Ironic checks it with jsonschema against its
// network-data-schema.json; Rivet checks the same structure in Go (the
// required keys, the types and the enumerated values) and answers 400
// "Invalid network_data: <what> " as Ironic does for a PATCH.

var v1_66 = version.Version{Major: 1, Minor: 66}

func init() {
	nodeSince["network_data"] = v1_66
	nodeFields = append(nodeFields, "network_data")
	nodeCreatable = append(nodeCreatable, "network_data")
	if !slices.Contains(nodePatch.allowed, "network_data") {
		i := slices.Index(nodePatch.allowed, "network_interface") // Ironic's order
		nodePatch.allowed = slices.Insert(nodePatch.allowed, max(i, 0), "network_data")
	}
}

// applyNetworkData sets network_data from a POST body or a patched
// document: null is {}, as Ironic stores it.
func applyNetworkData(n *objects.Node, body object) error {
	raw, ok := body["network_data"]
	if !ok {
		return nil
	}
	if isNull(raw) {
		n.NetworkData = map[string]any{}
		return nil
	}
	m, err := asDict(raw)
	if err != nil {
		return errorf(http.StatusBadRequest, "Invalid network_data: %s is not of type 'object' ", pyJSONRepr(raw))
	}
	if len(m) > 0 {
		if msg := checkNetworkData(m); msg != "" {
			return errorf(http.StatusBadRequest, "Invalid network_data: %s ", msg)
		}
	}
	n.NetworkData = m
	return nil
}

// pyJSONRepr is a short rendering of a JSON value for a message.
func pyJSONRepr(raw json.RawMessage) string {
	s := strings.TrimSpace(string(raw))
	if len(s) > 80 {
		s = s[:77] + "..."
	}
	return s
}

// Enumerations of the network data schema.
var (
	netDataLinkTypes    = []string{"bridge", "dvs", "hw_veb", "hyperv", "ovs", "tap", "vhostuser", "vif", "phy"}
	netDataBondModes    = []string{"802.3ad", "balance-rr", "active-backup", "balance-xor", "broadcast", "balance-tlb", "balance-alb"}
	netDataNetworkTypes = []string{"ipv4", "ipv4_dhcp", "ipv6", "ipv6_dhcp", "ipv6_slaac"}
)

// checkNetworkData checks a non-empty network_data document; it returns
// what is wrong, in jsonschema's words, or "".
func checkNetworkData(m map[string]any) string {
	for _, k := range []string{"links", "networks", "services"} {
		if _, ok := m[k]; !ok {
			return fmt.Sprintf("'%s' is a required property", k)
		}
		if _, ok := m[k].([]any); !ok {
			return fmt.Sprintf("%s is not of type 'array' (in %s)", jsonValueRepr(m[k]), k)
		}
	}
	for i, raw := range m["links"].([]any) {
		if msg := checkNetDataLink(raw); msg != "" {
			return fmt.Sprintf("%s (in links[%d])", msg, i)
		}
	}
	for i, raw := range m["networks"].([]any) {
		if msg := checkNetDataNetwork(raw); msg != "" {
			return fmt.Sprintf("%s (in networks[%d])", msg, i)
		}
	}
	for i, raw := range m["services"].([]any) {
		if msg := checkNetDataService(raw); msg != "" {
			return fmt.Sprintf("%s (in services[%d])", msg, i)
		}
	}
	return ""
}

// required checks that obj is an object with string keys (and the
// non-string keys given in other); it returns the first problem.
func netDataRequired(raw any, strs []string, other ...string) (map[string]any, string) {
	obj, ok := raw.(map[string]any)
	if !ok {
		return nil, fmt.Sprintf("%s is not of type 'object'", jsonValueRepr(raw))
	}
	for _, k := range append(append([]string(nil), strs...), other...) {
		if _, ok := obj[k]; !ok {
			return nil, fmt.Sprintf("'%s' is a required property", k)
		}
	}
	for _, k := range strs {
		if _, ok := obj[k].(string); !ok {
			return nil, fmt.Sprintf("%s is not of type 'string' ('%s')", jsonValueRepr(obj[k]), k)
		}
	}
	return obj, ""
}

func netDataEnum(obj map[string]any, key string, values []string) string {
	v, _ := obj[key].(string)
	if slices.Contains(values, v) {
		return ""
	}
	return fmt.Sprintf("'%s' is not one of ['%s'] ('%s')", v, strings.Join(values, "', '"), key)
}

func checkNetDataLink(raw any) string {
	obj, ok := raw.(map[string]any)
	if !ok {
		return fmt.Sprintf("%s is not of type 'object'", jsonValueRepr(raw))
	}
	typ, _ := obj["type"].(string)
	var msg string
	switch typ {
	case "bond":
		if obj, msg = netDataRequired(raw, []string{"ethernet_mac_address", "id", "type", "bond_mode"}, "bond_links"); msg != "" {
			return msg
		}
		if _, ok := obj["bond_links"].([]any); !ok {
			return fmt.Sprintf("%s is not of type 'array' ('bond_links')", jsonValueRepr(obj["bond_links"]))
		}
		return netDataEnum(obj, "bond_mode", netDataBondModes)
	case "vlan":
		if obj, msg = netDataRequired(raw, []string{"vlan_mac_address", "id", "type", "vlan_link"}, "vlan_id"); msg != "" {
			return msg
		}
		if jsonType(jsonNumberOf(obj["vlan_id"])) != "integer" {
			return fmt.Sprintf("%s is not of type 'integer' ('vlan_id')", jsonValueRepr(obj["vlan_id"]))
		}
	default:
		if obj, msg = netDataRequired(raw, []string{"ethernet_mac_address", "id", "type"}); msg != "" {
			return msg
		}
		if msg := netDataEnum(obj, "type", netDataLinkTypes); msg != "" {
			return msg
		}
	}
	if mtu, ok := obj["mtu"]; ok && mtu != nil {
		f, ok := numberValue(mtu)
		if !ok || f < 1 || f > 65535 {
			return fmt.Sprintf("%s is not valid under any of the given schemas ('mtu': a number from 1 to 65535, or null)", jsonValueRepr(mtu))
		}
	}
	return ""
}

func checkNetDataNetwork(raw any) string {
	obj, msg := netDataRequired(raw, []string{"id", "link", "network_id", "type"})
	if msg != "" {
		return msg
	}
	if msg := netDataEnum(obj, "type", netDataNetworkTypes); msg != "" {
		return msg
	}
	if routes, ok := obj["routes"]; ok {
		list, ok := routes.([]any)
		if !ok {
			return fmt.Sprintf("%s is not of type 'array' ('routes')", jsonValueRepr(routes))
		}
		for _, r := range list {
			if _, msg := netDataRequired(r, []string{"gateway", "netmask", "network"}); msg != "" {
				return msg + " (in routes)"
			}
		}
	}
	return ""
}

func checkNetDataService(raw any) string {
	obj, msg := netDataRequired(raw, []string{"address", "type"})
	if msg != "" {
		return msg
	}
	return netDataEnum(obj, "type", []string{"dns"})
}

// jsonNumberOf turns a float64 (a value decoded without UseNumber) into
// a json.Number for jsonType.
func jsonNumberOf(v any) any {
	if f, ok := v.(float64); ok {
		return json.Number(fmt.Sprint(f))
	}
	return v
}

// numberValue reads a JSON number.
func numberValue(v any) (float64, bool) {
	switch x := v.(type) {
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	case float64:
		return x, true
	}
	return 0, false
}

// jsonValueRepr renders a decoded value briefly, as JSON.
func jsonValueRepr(v any) string {
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return pyJSONRepr(data)
}
