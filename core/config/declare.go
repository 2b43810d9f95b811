package config

import "time"

// The constructors below are how opts_*.go declare options. Binding a field
// through a typed accessor makes a kind/field mismatch a compile error.

func declare[T any](name string, kind Kind, def T, field func(*Config) *T, help string) *Option {
	return &Option{Name: name, Kind: kind, def: def, Help: help, field: func(c *Config) any { return field(c) }}
}

func strOpt(name, def string, field func(*Config) *string, help string) *Option {
	return declare(name, String, def, field, help)
}

func boolOpt(name string, def bool, field func(*Config) *bool, help string) *Option {
	return declare(name, Bool, def, field, help)
}

func intOpt(name string, def int, field func(*Config) *int, help string) *Option {
	return declare(name, Int, def, field, help)
}

// durOpt declares a duration; durations are never negative.
func durOpt(name string, def time.Duration, field func(*Config) *time.Duration, help string) *Option {
	return declare(name, Duration, def, field, help).atLeast(0)
}

func listOpt(name string, def []string, field func(*Config) *[]string, help string) *Option {
	return declare(name, List, def, field, help)
}

// choices restricts the option to values.
func (o *Option) choices(cs ...Choice) *Option { o.Choices = cs; return o }

// reloadable marks the option as applied on SIGHUP.
func (o *Option) reloadable() *Option { o.Reloadable = true; return o }

// secret hides the option's value everywhere.
func (o *Option) secret() *Option { o.Secret = true; return o }

// masked shows values through fn (e.g. a URL with its password hidden).
func (o *Option) masked(fn func(string) string) *Option { o.maskValue = fn; return o }

// atLeast sets the lower bound: units for Int, nanoseconds for Duration.
func (o *Option) atLeast(n int64) *Option { o.min = &n; return o }

// atMost sets the upper bound: units for Int, nanoseconds for Duration.
func (o *Option) atMost(n int64) *Option { o.max = &n; return o }

// between sets both bounds.
func (o *Option) between(lo, hi int64) *Option { return o.atLeast(lo).atMost(hi) }

// required rejects an empty value.
func (o *Option) required() *Option { o.nonEmpty = true; return o }

// computed takes the default from fn at run time and shows sample instead.
func (o *Option) computed(fn func() any, sample string) *Option {
	o.defFunc, o.SampleDefault = fn, sample
	return o
}

// check adds a rule on the value: fn returns the problem, or "".
func (o *Option) check(fn func(v any) string) *Option { o.checkValue = fn; return o }
