package config

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/rivetmetal/rivet/core/release"
)

// Validate checks c against every option's declaration and the rules that
// span options, with pin_release_version checked against Rivet's release
// table. It returns one *Error per problem, joined.
func (c *Config) Validate() error { return c.ValidateFor(release.Default()) }

// ValidateFor is Validate with pin_release_version checked against t.
func (c *Config) ValidateFor(t *release.Table) error {
	var errs []error
	for _, o := range declared.all {
		if p := o.problem(o.get(c)); p != "" {
			errs = append(errs, optionError("", o, p))
		}
	}
	for _, rule := range rules {
		errs = append(errs, rule(c, t)...)
	}
	return errors.Join(errs...)
}

// problem checks v against o's declaration and says what is wrong, or "".
func (o *Option) problem(v any) string {
	if o.nonEmpty && format(o.Kind, v) == "" {
		return "must not be empty"
	}
	if len(o.Choices) > 0 && !slices.ContainsFunc(o.Choices, func(c Choice) bool { return c.Value == format(o.Kind, v) }) {
		return fmt.Sprintf("%s is not valid: valid values are %s", o.display(v), o.choiceList())
	}
	if p := o.boundsProblem(v); p != "" {
		return p
	}
	if o.checkValue != nil {
		return o.checkValue(v)
	}
	return ""
}

func (o *Option) boundsProblem(v any) string {
	var n int64
	switch x := v.(type) {
	case int:
		n = int64(x)
	case time.Duration:
		n = int64(x)
	default:
		return ""
	}
	var lo, hi string
	if o.min != nil {
		lo = o.boundValue(*o.min, displayValue)
	}
	if o.max != nil {
		hi = o.boundValue(*o.max, displayValue)
	}
	switch {
	case o.min != nil && o.max != nil && (n < *o.min || n > *o.max):
		return fmt.Sprintf("%s is out of range %s..%s", o.display(v), lo, hi)
	case o.min != nil && n < *o.min:
		return fmt.Sprintf("%s is below the minimum %s", o.display(v), lo)
	case o.max != nil && n > *o.max:
		return fmt.Sprintf("%s is above the maximum %s", o.display(v), hi)
	}
	return ""
}

// choiceList renders the choices for a message: noauth, http_basic; the
// empty value is shown as "".
func (o *Option) choiceList() string {
	vals := make([]string, len(o.Choices))
	for i, c := range o.Choices {
		vals[i] = c.Value
		if c.Value == "" {
			vals[i] = `""`
		}
	}
	return strings.Join(vals, ", ")
}

// opt returns a declared option; rules name only options that exist, which
// TestRulesNameDeclaredOptions checks by running them.
func opt(section, name string) *Option {
	o, ok := Lookup(section, name)
	if !ok {
		panic("config: rule names undeclared option [" + section + "] " + name)
	}
	return o
}

// rules are the checks that span options or need the release table.
var rules = []func(c *Config, t *release.Table) []error{
	func(c *Config, _ *release.Table) []error {
		if c.AutoDiscovery.Enabled && c.AutoDiscovery.Driver == "" {
			return []error{optionError("", opt("auto_discovery", "driver"),
				"must be set when [auto_discovery] enabled is true: the hardware type of the nodes discovery enrolls")}
		}
		return nil
	},
	func(c *Config, t *release.Table) []error {
		if _, err := t.ParsePin(c.Default.PinReleaseVersion); err != nil {
			return []error{optionError("", opt("DEFAULT", "pin_release_version"), err.Error())}
		}
		return nil
	},
	func(c *Config, _ *release.Table) []error {
		if c.Conductor.HeartbeatTimeout <= c.Conductor.HeartbeatInterval {
			return []error{optionError("", opt("conductor", "heartbeat_timeout"), fmt.Sprintf(
				"%s must be greater than [conductor] heartbeat_interval (%s)",
				c.Conductor.HeartbeatTimeout, c.Conductor.HeartbeatInterval))}
		}
		return nil
	},
	func(c *Config, _ *release.Table) []error {
		if c.Default.ServiceForgetTimeout <= c.Conductor.HeartbeatTimeout {
			return []error{optionError("", opt("DEFAULT", "service_forget_timeout"), fmt.Sprintf(
				"%s must be greater than [conductor] heartbeat_timeout (%s)",
				c.Default.ServiceForgetTimeout, c.Conductor.HeartbeatTimeout))}
		}
		return nil
	},
	func(c *Config, _ *release.Table) []error {
		if !c.API.EnableSSLAPI {
			return nil
		}
		return requireSet("when [api] enable_ssl_api is true",
			optionValue{opt("api", "cert_file"), c.API.CertFile},
			optionValue{opt("api", "key_file"), c.API.KeyFile})
	},
	func(c *Config, _ *release.Table) []error {
		if !c.JSONRPC.UseSSL {
			return nil
		}
		return requireSet("when [json_rpc] use_ssl is true",
			optionValue{opt("json_rpc", "cert_file"), c.JSONRPC.CertFile},
			optionValue{opt("json_rpc", "key_file"), c.JSONRPC.KeyFile})
	},
	func(c *Config, _ *release.Table) []error {
		if !c.JSONRPC.RequireClientCert {
			return nil
		}
		errs := requireSet("when [json_rpc] require_client_certificate is true",
			optionValue{opt("json_rpc", "cafile"), c.JSONRPC.CAFile})
		if !c.JSONRPC.UseSSL {
			errs = append(errs, optionError("", opt("json_rpc", "use_ssl"),
				"must be true when [json_rpc] require_client_certificate is true"))
		}
		return errs
	},
	func(c *Config, _ *release.Table) []error {
		// Projects scope http_basic users; with noauth there is no user,
		// and a file that seems to restrict would restrict nothing.
		if c.API.HTTPBasicProjectsFile == "" || c.Default.AuthStrategy == "http_basic" {
			return nil
		}
		return []error{optionError("", opt("api", "http_basic_projects_file"),
			"needs [DEFAULT] auth_strategy = http_basic: without it requests carry no user, and no project would restrict anything")}
	},
	func(c *Config, _ *release.Table) []error {
		if c.Default.RPCTransport != "json-rpc" || c.JSONRPCAuthStrategy() != "http_basic" {
			return nil
		}
		return requireSet("when JSON-RPC uses http_basic authentication",
			optionValue{opt("json_rpc", "username"), c.JSONRPC.Username},
			optionValue{opt("json_rpc", "password"), c.JSONRPC.Password})
	},
}

type optionValue struct {
	o *Option
	v string
}

func requireSet(when string, ovs ...optionValue) []error {
	var errs []error
	for _, ov := range ovs {
		if ov.v == "" {
			errs = append(errs, optionError("", ov.o, "must be set "+when))
		}
	}
	return errs
}

// JSONRPCAuthStrategy is the effective JSON-RPC auth strategy: [json_rpc]
// auth_strategy, or [DEFAULT] auth_strategy when that is empty.
func (c *Config) JSONRPCAuthStrategy() string {
	if c.JSONRPC.AuthStrategy != "" {
		return c.JSONRPC.AuthStrategy
	}
	return c.Default.AuthStrategy
}

// Pin parses [DEFAULT] pin_release_version against t.
func (c *Config) Pin(t *release.Table) (release.Pin, error) {
	p, err := t.ParsePin(c.Default.PinReleaseVersion)
	if err != nil {
		return release.Pin{}, optionError("", opt("DEFAULT", "pin_release_version"), err.Error())
	}
	return p, nil
}
