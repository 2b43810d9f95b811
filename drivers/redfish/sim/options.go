package sim

import (
	"errors"
	"fmt"
	"log/slog"
	"time"
)

// Default values for zero Options fields.
const (
	DefaultUsername       = "admin"
	DefaultPassword       = "password"
	DefaultSessionTimeout = 30 * time.Minute
)

// MaxSystems bounds Options.Systems; MAC addresses embed the index in 24 bits.
const MaxSystems = 1 << 24

// Options configures a Simulator. The zero value is one system with the
// default credentials, no faults and no session limit.
type Options struct {
	// Systems is how many computer systems the one endpoint serves (default 1).
	Systems int
	// Username and Password are the one account's credentials
	// (defaults DefaultUsername and DefaultPassword).
	Username, Password string
	// Latency delays every answer by this much.
	Latency time.Duration
	// ErrorRate is the fraction (0..1) of requests answered with a 500.
	ErrorRate float64
	// HangRate is the fraction (0..1) of requests that never answer until the
	// client gives up or the simulator stops.
	HangRate float64
	// SessionLimit caps live sessions; 0 means no limit. Beyond it a login
	// gets 503 SessionLimitExceeded.
	SessionLimit int
	// SessionTimeout is how long a session may sit idle before it expires
	// (default DefaultSessionTimeout).
	SessionTimeout time.Duration
	// PowerSettle is how long a power change takes: the system reads
	// PoweringOn or PoweringOff until it has passed. 0 switches at once.
	PowerSettle time.Duration
	// UpdateDuration is how long a firmware update (SimpleUpdate) runs on
	// the simulator's clock before its Task completes (default
	// DefaultUpdateLength).
	UpdateDuration time.Duration
	// SystemVirtualMedia also serves each system's virtual media under
	// /redfish/v1/Systems/{id}/VirtualMedia, as newer BMCs do; the slots are
	// the same as under the Manager. Off, media lives on the Manager only,
	// so a driver's Manager path is what gets exercised.
	SystemVirtualMedia bool
	// Quirks make it behave as some real BMC families do.
	Quirks Quirks
	// Seed makes hardware (UUIDs, MACs, sizes) and fault draws repeatable.
	Seed uint64
	// Now is the clock for power settling and session expiry (default
	// time.Now); tests pass a fake one. Latency and hangs use real time.
	Now func() time.Time
	// Logger receives one debug line per request (default: discard).
	Logger *slog.Logger
}

// Validate reports every out-of-range option.
func (o Options) Validate() error {
	var errs []error
	if o.Systems < 0 || o.Systems > MaxSystems {
		errs = append(errs, fmt.Errorf("systems %d: want 0..%d", o.Systems, MaxSystems))
	}
	for _, r := range []struct {
		name string
		v    float64
	}{{"error rate", o.ErrorRate}, {"hang rate", o.HangRate}} {
		if !(r.v >= 0 && r.v <= 1) { // also rejects NaN
			errs = append(errs, fmt.Errorf("%s %v: want 0..1", r.name, r.v))
		}
	}
	if o.ErrorRate+o.HangRate > 1 {
		errs = append(errs, fmt.Errorf("error rate + hang rate = %v: want at most 1", o.ErrorRate+o.HangRate))
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"latency", o.Latency}, {"session timeout", o.SessionTimeout}, {"power settle", o.PowerSettle}, {"update duration", o.UpdateDuration}} {
		if d.v < 0 {
			errs = append(errs, fmt.Errorf("%s %v: must not be negative", d.name, d.v))
		}
	}
	errs = append(errs, o.Quirks.validate()...)
	if o.SessionLimit < 0 {
		errs = append(errs, fmt.Errorf("session limit %d: must not be negative", o.SessionLimit))
	}
	return errors.Join(errs...)
}

// withDefaults fills the zero fields.
func (o Options) withDefaults() Options {
	if o.Systems == 0 {
		o.Systems = 1
	}
	if o.Username == "" {
		o.Username = DefaultUsername
	}
	if o.Password == "" {
		o.Password = DefaultPassword
	}
	if o.SessionTimeout == 0 {
		o.SessionTimeout = DefaultSessionTimeout
	}
	if o.UpdateDuration == 0 {
		o.UpdateDuration = DefaultUpdateLength
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}
