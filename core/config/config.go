package config

import "slices"

// Config is Rivet's whole configuration, one field per INI section. Build it
// with Load or Default; treat a loaded Config as read-only, since a Reloader
// may share it between goroutines.
type Config struct {
	Default   DefaultOpts
	API       APIOpts
	Conductor ConductorOpts
	Database  DatabaseOpts
	JSONRPC   JSONRPCOpts
	Redfish   RedfishOpts
	IPMI      IPMIOpts
	Inspector InspectorOpts
	// InspectionRules is [inspection_rules].
	InspectionRules InspectionRulesOpts
	// AutoDiscovery is [auto_discovery].
	AutoDiscovery AutoDiscoveryOpts
	Agent         AgentOpts
	Deploy        DeployOpts
	Metrics       MetricsOpts
	Sensors       SensorOpts
	// Console is [console].
	Console ConsoleOpts
}

// section groups the declarations of one INI section.
type section struct {
	name    string
	help    string
	options []*Option
}

// registry indexes every declared option.
type registry struct {
	sections []section
	byName   map[string]map[string]*Option // section → option name → option
	byEnvVar map[string]*Option
	all      []*Option
}

// declared holds every option, in sample order. It is built from static
// declarations; a duplicate is a programming error caught by any test.
var declared = newRegistry(
	defaultSection(), apiSection(), conductorSection(), databaseSection(),
	jsonRPCSection(), redfishSection(), ipmiSection(), inspectorSection(), inspectionRulesSection(), autoDiscoverySection(), agentSection(), deploySection(),
	metricsSection(), sensorsSection(),
	consoleSection(),
)

func newRegistry(secs ...section) *registry {
	r := &registry{sections: secs, byName: map[string]map[string]*Option{}, byEnvVar: map[string]*Option{}}
	for _, s := range secs {
		if r.byName[s.name] != nil {
			panic("config: section " + s.name + " declared twice")
		}
		r.byName[s.name] = map[string]*Option{}
		for _, o := range s.options {
			o.Section = s.name
			if r.byName[s.name][o.Name] != nil {
				panic("config: option " + o.Key() + " declared twice")
			}
			if prev := r.byEnvVar[o.EnvVar()]; prev != nil {
				panic("config: " + o.Key() + " and " + prev.Key() + " share " + o.EnvVar())
			}
			r.byName[s.name][o.Name] = o
			r.byEnvVar[o.EnvVar()] = o
			r.all = append(r.all, o)
		}
	}
	return r
}

// Options returns every declared option, section by section in sample order.
func Options() []*Option { return slices.Clone(declared.all) }

// Sections returns the section names in sample order.
func Sections() []string {
	names := make([]string, len(declared.sections))
	for i, s := range declared.sections {
		names[i] = s.name
	}
	return names
}

// Lookup returns the declaration of [section] name.
func Lookup(section, name string) (*Option, bool) {
	o, ok := declared.byName[section][name]
	return o, ok
}

// Default returns a Config holding every option's default.
func Default() *Config {
	c := &Config{}
	for _, o := range declared.all {
		if o.defFunc != nil {
			o.set(c, o.defFunc())
		} else {
			o.set(c, o.def)
		}
	}
	return c
}

// Clone returns a deep copy of c.
func (c *Config) Clone() *Config {
	out := &Config{}
	for _, o := range declared.all {
		o.set(out, o.get(c))
	}
	return out
}
