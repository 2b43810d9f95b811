package config

import (
	"errors"
	"strings"
)

// SectionEnv returns RIVET_<SECTION>_<OPTION>=value for every option of
// section as c holds it. It is how the conductor hands the [redfish] and
// [ipmi] options to the built-in driver plugins, which run in processes of
// their own and never read the configuration files; LoadSection reads them
// back there. Sections with secrets are not to be passed this way.
func SectionEnv(c *Config, section string) []string {
	var env []string
	for _, o := range declared.all {
		if o.Section == section {
			env = append(env, o.EnvVar()+"="+format(o.Kind, o.get(c)))
		}
	}
	return env
}

// LoadSection returns the defaults with section's options taken from the
// RIVET_<SECTION>_<OPTION> variables of environ and checked; every other
// section keeps its defaults and is not validated (a driver plugin needs
// its own section only, and has no [database] connection, for example).
func LoadSection(section string, environ []string) (*Config, error) {
	c := Default()
	prefix := "RIVET_" + strings.ToUpper(section) + "_"
	var errs []error
	for _, kv := range environ {
		name, value, ok := strings.Cut(kv, "=")
		o := declared.byEnvVar[name]
		if !ok || o == nil || !strings.HasPrefix(name, prefix) || o.Section != section {
			continue
		}
		if err := assign(c, o, "environment variable "+name, value); err != nil {
			errs = append(errs, err)
		}
	}
	for _, o := range declared.all {
		if o.Section != section {
			continue
		}
		if p := o.problem(o.get(c)); p != "" {
			errs = append(errs, optionError("", o, p))
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return c, nil
}
