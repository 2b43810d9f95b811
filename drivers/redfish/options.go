package redfish

import "time"

// Options are the driver-wide settings. DefaultOptions equals the
// conductor's [redfish] defaults (core/config/opts_drivers.go); the plugin
// cannot read the conductor's configuration, so the per-node ones also have
// a driver_info key (see doc.go) the conductor can fill in.
type Options struct {
	// ConnectionTimeout bounds each HTTP request to a BMC, from dial to the
	// last byte of the answer ([redfish] connection_timeout).
	ConnectionTimeout time.Duration
	// SessionBudgetPerBMC is how many requests may be in flight to one BMC
	// at once; they share one session ([redfish] session_budget_per_bmc).
	SessionBudgetPerBMC int
	// VerifyCADefault is used when a node has no redfish_verify_ca
	// ([redfish] verify_ca_default).
	VerifyCADefault bool
	// PowerStateChangeTimeout bounds the wait for a node to reach a power
	// state ([redfish] power_state_change_timeout); driver_info
	// redfish_power_state_change_timeout (seconds) overrides it per node.
	PowerStateChangeTimeout time.Duration
	// UseSessions makes "auto" the default redfish_auth_type; false makes it
	// "basic" ([redfish] use_sessions).
	UseSessions bool
	// PowerPollInterval is the first pause between two power-state reads
	// while waiting; the pause grows by half each time up to four times it,
	// so a slow BMC is not hammered.
	PowerPollInterval time.Duration
	// BreakerThreshold is how many consecutive BMC failures (no answer, or
	// a 5xx) open the BMC's circuit breaker.
	BreakerThreshold int
	// BreakerCooldown is how long an open breaker fails calls fast before
	// it lets one probe through; it doubles after each failed probe, up to
	// 16 times itself.
	BreakerCooldown time.Duration
	// SessionRetryMax caps the pause between two session logins refused
	// because the BMC has no free session (redfish_auth_type session).
	// gofish drops response headers on errors, so the BMC's Retry-After
	// cannot be read; the pause starts at a quarter second and doubles up
	// to this. The whole wait is bounded by the caller's deadline and by
	// three ConnectionTimeouts.
	SessionRetryMax time.Duration
	// SessionIdleTimeout logs a BMC's session out once no call has used it
	// for this long, well inside the usual 30-minute BMC session timeout:
	// BMCs allow few sessions, and a session nobody uses should not hold
	// one (nor outlive a plugin that dies without logging out for long).
	SessionIdleTimeout time.Duration
	// Now is the clock of the breakers (default time.Now); tests pass a fake.
	Now func() time.Time
}

// DefaultOptions returns the conductor's [redfish] defaults and the driver's
// own.
func DefaultOptions() Options {
	return Options{
		ConnectionTimeout:       10 * time.Second,
		SessionBudgetPerBMC:     2,
		VerifyCADefault:         true,
		PowerStateChangeTimeout: 60 * time.Second,
		UseSessions:             true,
		PowerPollInterval:       time.Second,
		BreakerThreshold:        5,
		BreakerCooldown:         30 * time.Second,
		SessionRetryMax:         5 * time.Second,
		SessionIdleTimeout:      5 * time.Minute,
	}
}

// withDefaults fills zero and negative numbers from DefaultOptions; the
// booleans are taken as given, so start from DefaultOptions.
func (o Options) withDefaults() Options {
	d := DefaultOptions()
	if o.ConnectionTimeout <= 0 {
		o.ConnectionTimeout = d.ConnectionTimeout
	}
	if o.SessionBudgetPerBMC <= 0 {
		o.SessionBudgetPerBMC = d.SessionBudgetPerBMC
	}
	if o.PowerStateChangeTimeout <= 0 {
		o.PowerStateChangeTimeout = d.PowerStateChangeTimeout
	}
	if o.PowerPollInterval <= 0 {
		o.PowerPollInterval = d.PowerPollInterval
	}
	if o.BreakerThreshold <= 0 {
		o.BreakerThreshold = d.BreakerThreshold
	}
	if o.BreakerCooldown <= 0 {
		o.BreakerCooldown = d.BreakerCooldown
	}
	if o.SessionRetryMax <= 0 {
		o.SessionRetryMax = d.SessionRetryMax
	}
	if o.SessionIdleTimeout <= 0 {
		o.SessionIdleTimeout = d.SessionIdleTimeout
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}
