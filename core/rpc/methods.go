package rpc

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/rivetmetal/rivet/core/version"
)

// APIVersion is the conductor RPC API version this code serves and speaks
// when unpinned. core/release HEAD.RPC must equal it (TestHeadMatchesCode).
var APIVersion = version.Version{Major: 1, Minor: 6}

// ArgPolicy says what a client does with an argument newer than its cap.
type ArgPolicy int

const (
	// OmitAboveCap drops the argument silently: the server's default applies
	// (Ironic's heartbeat agent_token).
	OmitAboveCap ArgPolicy = iota
	// RefuseAboveCap fails the call with *CapError: the caller asked for
	// something an older conductor cannot do (Ironic's disable_ramdisk).
	RefuseAboveCap
)

// ArgType is the JSON type of an argument on the wire: a JSON type, or the
// kind of a versioned object (sent as a rivet_object primitive). Within a
// major it never changes (seeds/000: existing arguments cannot be changed
// in incompatible ways); the golden files under testdata/<release>/ record it.
type ArgType string

// Argument types.
const (
	TypeString    ArgType = "string"
	TypeBoolean   ArgType = "boolean"
	TypeInteger   ArgType = "integer"
	TypeObject    ArgType = "object" // a JSON object
	TypeArray     ArgType = "array"
	TypeAny       ArgType = "any" // more than one JSON type (configdrive: a string or an object)
	TypeNode      ArgType = "Node"
	TypePort      ArgType = "Port"
	TypePortgroup ArgType = "Portgroup"
	// TypeVolumeConnector and TypeVolumeTarget are objects new in 1.5.
	TypeVolumeConnector ArgType = "VolumeConnector"
	TypeVolumeTarget    ArgType = "VolumeTarget"
	// TypeAllocation is an Allocation object (RPC 1.5).
	TypeAllocation ArgType = "Allocation"
)

// argTypes are the types NewMethods accepts ("" leaves a test table's
// argument untyped; ConductorMethods types every one).
var argTypes = []ArgType{"", TypeString, TypeBoolean, TypeInteger, TypeObject, TypeArray, TypeAny, TypeNode, TypePort, TypePortgroup,
	TypeVolumeConnector, TypeVolumeTarget, TypeAllocation}

// Arg describes one argument of a method.
type Arg struct {
	Name     string
	Since    version.Version
	Type     ArgType
	Required bool
	Policy   ArgPolicy
	// Values lists string values newer than the argument itself, with the
	// version that introduced each (change_node_power_state's "soft power
	// off" in 1.1). A request carrying one is sent at least at that
	// version; above the cap the call is refused with *CapError whatever
	// Policy says, since an older conductor would misread it.
	Values map[string]version.Version
	// ValueKey, for an array of objects, names the string field of each
	// element that Values lists (do_node_service's service_steps: a step
	// named hold needs 1.6); the request needs the newest.
	ValueKey string
}

// valueSince returns the version a raw JSON value of a needs, with the
// value that needs it: a's own, or a newer one from Values when raw is a
// string listed there (or, with ValueKey, holds elements whose field is).
func (a Arg) valueSince(raw json.RawMessage) (version.Version, string) {
	since, which := a.Since, ""
	if len(a.Values) == 0 {
		return since, which
	}
	var values []string
	if a.ValueKey == "" {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return since, which
		}
		values = []string{s}
	} else {
		var items []map[string]json.RawMessage
		if json.Unmarshal(raw, &items) != nil {
			return since, which
		}
		for _, it := range items {
			var s string
			if json.Unmarshal(it[a.ValueKey], &s) == nil {
				values = append(values, s)
			}
		}
	}
	for _, s := range values {
		if v, ok := a.Values[s]; ok && since.Less(v) {
			since, which = v, s
		}
	}
	return since, which
}

// Method describes one RPC method.
type Method struct {
	Name  string
	Since version.Version
	Args  []Arg
}

// Arg returns the named argument.
func (m Method) Arg(name string) (Arg, bool) {
	i := slices.IndexFunc(m.Args, func(a Arg) bool { return a.Name == name })
	if i < 0 {
		return Arg{}, false
	}
	return m.Args[i], true
}

// Methods is a validated method table.
type Methods struct {
	version version.Version
	byName  map[string]Method
}

// NewMethods validates a method table for an RPC API at ver: every method and
// argument is at most ver and of ver's major, required arguments date from
// the method's first version, names are unique.
func NewMethods(ver version.Version, methods ...Method) (*Methods, error) {
	t := &Methods{version: ver, byName: map[string]Method{}}
	for _, m := range methods {
		if _, dup := t.byName[m.Name]; dup {
			return nil, fmt.Errorf("rpc: method %s declared twice", m.Name)
		}
		if !m.Since.ServedBy(ver) {
			return nil, fmt.Errorf("rpc: method %s since %s is not within API %s", m.Name, m.Since, ver)
		}
		seen := map[string]bool{}
		for _, a := range m.Args {
			if seen[a.Name] || a.Name == VersionParam || a.Name == ContextParam {
				return nil, fmt.Errorf("rpc: %s: argument %q duplicated or reserved", m.Name, a.Name)
			}
			seen[a.Name] = true
			if !slices.Contains(argTypes, a.Type) {
				return nil, fmt.Errorf("rpc: %s(%s) has unknown type %q", m.Name, a.Name, a.Type)
			}
			if !a.Since.ServedBy(ver) || a.Since.Less(m.Since) {
				return nil, fmt.Errorf("rpc: %s(%s) since %s outside %s..%s", m.Name, a.Name, a.Since, m.Since, ver)
			}
			if a.Required && a.Since != m.Since {
				return nil, fmt.Errorf("rpc: %s(%s) added in %s must be optional (seeds/000: new arguments are optional within a major)", m.Name, a.Name, a.Since)
			}
			if a.ValueKey != "" && a.Type != TypeArray {
				return nil, fmt.Errorf("rpc: %s(%s) has a value key but is not an array", m.Name, a.Name)
			}
			if a.Type == TypeArray && len(a.Values) > 0 && a.ValueKey == "" {
				return nil, fmt.Errorf("rpc: %s(%s): an array's versioned values need a value key", m.Name, a.Name)
			}
			for val, since := range a.Values {
				if !since.ServedBy(ver) || !a.Since.Less(since) {
					return nil, fmt.Errorf("rpc: %s(%s=%q) since %s must be newer than the argument (%s) and within %s", m.Name, a.Name, val, since, a.Since, ver)
				}
			}
		}
		t.byName[m.Name] = m
	}
	return t, nil
}

// Version is the RPC API version the table describes.
func (t *Methods) Version() version.Version { return t.version }

// Lookup returns a method by name.
func (t *Methods) Lookup(name string) (Method, bool) {
	m, ok := t.byName[name]
	return m, ok
}

// Names returns the method names, sorted.
func (t *Methods) Names() []string {
	out := make([]string, 0, len(t.byName))
	for n := range t.byName {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}
