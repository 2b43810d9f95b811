package ipmi

import "time"

// Options are the driver-wide defaults for what a node's driver_info does
// not set. DefaultOptions equals the conductor's [ipmi] defaults.
type Options struct {
	// CipherSuite is the RMCP+ cipher suite ([ipmi] cipher_suite).
	CipherSuite int
	// CommandTimeout bounds one UDP attempt of a command ([ipmi] command_timeout).
	CommandTimeout time.Duration
	// Retries is how many times a command that timed out is re-sent ([ipmi] retries).
	Retries int
	// MinCommandInterval is the smallest gap between two commands to one
	// BMC ([ipmi] min_command_interval).
	MinCommandInterval time.Duration
	// PowerStateChangeTimeout bounds the wait for a node to reach a power
	// state ([ipmi] power_state_change_timeout).
	PowerStateChangeTimeout time.Duration
	// SessionIdleTimeout closes a session nobody used for this long, below
	// the 30 s idle timeout of ipmi_sim and of many BMCs, so that a reused
	// session is rarely a dead one.
	SessionIdleTimeout time.Duration
}

// DefaultOptions returns the defaults of the conductor's [ipmi] section.
func DefaultOptions() Options {
	return Options{
		CipherSuite:             3,
		CommandTimeout:          2 * time.Second,
		Retries:                 2,
		MinCommandInterval:      500 * time.Millisecond,
		PowerStateChangeTimeout: 60 * time.Second,
		SessionIdleTimeout:      20 * time.Second,
	}
}

// withDefaults fills zero durations and cipher suite from DefaultOptions;
// zero Retries and MinCommandInterval stay zero (no retry, no pacing).
func (o Options) withDefaults() Options {
	d := DefaultOptions()
	if o.CipherSuite == 0 {
		o.CipherSuite = d.CipherSuite
	}
	if o.CommandTimeout <= 0 {
		o.CommandTimeout = d.CommandTimeout
	}
	if o.Retries < 0 {
		o.Retries = 0
	}
	if o.MinCommandInterval < 0 {
		o.MinCommandInterval = 0
	}
	if o.PowerStateChangeTimeout <= 0 {
		o.PowerStateChangeTimeout = d.PowerStateChangeTimeout
	}
	if o.SessionIdleTimeout <= 0 {
		o.SessionIdleTimeout = d.SessionIdleTimeout
	}
	return o
}
