package config

import (
	"strconv"
	"strings"
	"time"
)

// Kind is the type of an option's value.
type Kind int

const (
	// String is free text, or one of Choices when the option declares some.
	String Kind = iota
	// Bool accepts oslo's spellings: true/false, yes/no, on/off, 1/0.
	Bool
	// Int is a decimal integer, optionally bounded.
	Int
	// Duration is seconds (10, 0.5) or a Go duration (90s, 1m30s).
	Duration
	// List is comma-separated; blanks around items and empty items are dropped.
	List
)

// String names the kind as the sample file does.
func (k Kind) String() string {
	return [...]string{"string", "boolean", "integer", "duration", "list"}[k]
}

// Choice is one allowed value of an option and what it means.
type Choice struct {
	Value string
	Doc   string
}

// Option is the declaration of one configuration option. Options are
// declared in the opts_*.go files; callers read them through Options and
// Lookup and must not modify them.
type Option struct {
	// Section is the INI section: "DEFAULT", "api", "conductor", ….
	Section string
	// Name is the option's key within Section.
	Name string
	// Kind is the type of the value.
	Kind Kind
	// Help says what the option does, for the sample and the reference.
	Help string
	// Choices, when not empty, are the only valid values.
	Choices []Choice
	// Reloadable options take effect on SIGHUP; others need a restart.
	Reloadable bool
	// Secret values are never shown, in errors, logs or the sample.
	Secret bool
	// SampleDefault, when set, is shown instead of a default that is only
	// known at run time (the hostname).
	SampleDefault string

	min, max   *int64 // bounds of Int (units) and Duration (nanoseconds)
	nonEmpty   bool
	def        any                 // typed default
	defFunc    func() any          // default computed at run time
	field      func(*Config) any   // pointer to the field the option fills
	maskValue  func(string) string // how a value is shown; nil shows it as is
	checkValue func(v any) string  // extra per-value rule: problem or ""
}

// EnvVar is the environment variable that sets the option:
// RIVET_<SECTION>_<OPTION>, both upper-cased.
func (o *Option) EnvVar() string {
	return "RIVET_" + strings.ToUpper(o.Section) + "_" + strings.ToUpper(o.Name)
}

// Key names the option in messages: "[api] port".
func (o *Option) Key() string { return "[" + o.Section + "] " + o.Name }

// Bounds returns the inclusive range of an Int or Duration option as a file
// would write it (durations in seconds); "" means unbounded on that side.
func (o *Option) Bounds() (lo, hi string) {
	if o.min != nil {
		lo = o.boundValue(*o.min, format)
	}
	if o.max != nil {
		hi = o.boundValue(*o.max, format)
	}
	return lo, hi
}

// boundValue renders bound n with render (format, or displayValue).
func (o *Option) boundValue(n int64, render func(Kind, any) string) string {
	if o.Kind == Duration {
		return render(Duration, time.Duration(n))
	}
	return render(Int, int(n))
}

// DefaultString is the default as it would be written in a file, or
// SampleDefault when the default is computed at run time.
func (o *Option) DefaultString() string {
	if o.SampleDefault != "" {
		return o.SampleDefault
	}
	return format(o.Kind, o.def)
}

// get returns the option's value in c.
func (o *Option) get(c *Config) any {
	switch p := o.field(c).(type) {
	case *string:
		return *p
	case *bool:
		return *p
	case *int:
		return *p
	case *time.Duration:
		return *p
	case *[]string:
		return *p
	}
	panic("config: option " + o.Key() + " is bound to an unsupported field type")
}

// set stores v, of the option's Go type, in c.
func (o *Option) set(c *Config, v any) {
	switch p := o.field(c).(type) {
	case *string:
		*p = v.(string)
	case *bool:
		*p = v.(bool)
	case *int:
		*p = v.(int)
	case *time.Duration:
		*p = v.(time.Duration)
	case *[]string:
		*p = append([]string{}, v.([]string)...)
	default:
		panic("config: option " + o.Key() + " is bound to an unsupported field type")
	}
}

// display renders v for a message, masked if the option is secret.
func (o *Option) display(v any) string {
	switch {
	case o.Secret:
		return mask
	case o.maskValue != nil:
		return strconv.Quote(o.maskValue(format(o.Kind, v)))
	}
	return displayValue(o.Kind, v)
}

// displayValue renders a value for a message: strings quoted, durations as
// Go durations ("1m30s").
func displayValue(kind Kind, v any) string {
	switch kind {
	case String, List:
		return strconv.Quote(format(kind, v))
	case Duration:
		return v.(time.Duration).String()
	}
	return format(kind, v)
}

// displayRaw renders text from a file or the environment for a message.
func (o *Option) displayRaw(raw string) string {
	switch {
	case o.Secret:
		return mask
	case o.maskValue != nil:
		raw = o.maskValue(raw)
	}
	return strconv.Quote(raw)
}
