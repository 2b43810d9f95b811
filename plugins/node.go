package plugins

import (
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"

	"github.com/rivetmetal/rivet/plugins/redact"
	"github.com/rivetmetal/rivet/plugins/secretkey"
)

// Node identifies the node a call acts on and carries its driver_info.
// The SDK passes it by value; a driver must not keep it past the call.
type Node struct {
	// UUID is the node's Ironic UUID.
	UUID string
	// Name is the node's optional name.
	Name string
	// HardwareType is the hardware type the node is enrolled with
	// ("fake-hardware", "redfish", "ipmi", …).
	HardwareType string
	// DriverInfo is the node's driver_info, as JSON values (numbers are
	// float64 after crossing the plugin boundary).
	DriverInfo DriverInfo
	// InstanceInfo is the node's instance_info (image source, root size, …).
	InstanceInfo map[string]any
}

// LogValue makes a Node safe to log: identity only, driver_info redacted.
func (n Node) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("uuid", n.UUID),
		slog.String("name", n.Name),
		slog.String("hardware_type", n.HardwareType),
		slog.Any("driver_info", n.DriverInfo),
	)
}

// DriverInfo is a node's driver_info. Its String, Format and LogValue
// methods mask secret values so that a stray %v or log line cannot leak a
// BMC password.
type DriverInfo map[string]any

// Masked is what a secret value is replaced with, as Ironic's API does.
const Masked = redact.Masked

// IsSecretKey reports whether a driver_info key names a secret, by the
// rule the API's masking and the database's encryption use (secretkey.Is).
func IsSecretKey(key string) bool { return secretkey.Is(key) }

// Redacted returns a copy with every secret value replaced by Masked and
// URL credentials hidden (package redact), recursing into nested maps.
func (d DriverInfo) Redacted() map[string]any {
	return redactMap(d)
}

func redactMap(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		switch {
		case IsSecretKey(k):
			out[k] = Masked
		case isMap(v):
			out[k] = redactMap(asMap(v))
		default:
			out[k] = redact.Value(v)
		}
	}
	return out
}

func isMap(v any) bool {
	switch v.(type) {
	case map[string]any, DriverInfo:
		return true
	}
	return false
}

func asMap(v any) map[string]any {
	if d, ok := v.(DriverInfo); ok {
		return d
	}
	return v.(map[string]any)
}

// String renders the redacted driver_info with sorted keys.
func (d DriverInfo) String() string {
	r := d.Redacted()
	keys := slices.Sorted(maps.Keys(r))
	var b strings.Builder
	b.WriteString("map[")
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%s:%v", k, r[k])
	}
	b.WriteString("]")
	return b.String()
}

// Format makes every fmt verb (%v, %+v, %#v, %s) print the redacted form.
func (d DriverInfo) Format(f fmt.State, _ rune) { fmt.Fprint(f, d.String()) }

// LogValue redacts driver_info for log/slog.
func (d DriverInfo) LogValue() slog.Value { return slog.AnyValue(d.Redacted()) }

// StringValue returns the value of key as a string; ok is false when the key is
// absent or not a string.
func (d DriverInfo) StringValue(key string) (value string, ok bool) {
	v, present := d[key]
	if !present {
		return "", false
	}
	s, isString := v.(string)
	return s, isString
}

// Require checks that every key is present and non-empty and returns an
// *InvalidDriverInfoError naming the missing keys (never their values).
func (d DriverInfo) Require(keys ...string) error {
	var missing []string
	for _, k := range keys {
		v, ok := d[k]
		if !ok || v == nil || v == "" {
			missing = append(missing, k)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	return &InvalidDriverInfoError{Missing: missing}
}
