package config

import "time"

// RedfishOpts holds the [redfish] section. Each field is declared, with its
// default, rules and help, in redfishSection.
type RedfishOpts struct {
	ConnectionTimeout       time.Duration
	SessionBudgetPerBMC     int
	VerifyCADefault         bool
	PowerStateChangeTimeout time.Duration
	UseSessions             bool
}

// IPMIOpts holds the [ipmi] section. Each field is declared, with its
// default, rules and help, in ipmiSection.
type IPMIOpts struct {
	CipherSuite             int
	CommandTimeout          time.Duration
	Retries                 int
	MinCommandInterval      time.Duration
	PowerStateChangeTimeout time.Duration
}

func redfishSection() section {
	return section{name: "redfish", help: "Options of the redfish hardware type.", options: []*Option{
		durOpt("connection_timeout", 10*time.Second, func(c *Config) *time.Duration { return &c.Redfish.ConnectionTimeout },
			"Time allowed for each HTTP request to a BMC.").atLeast(int64(time.Second)),
		intOpt("session_budget_per_bmc", 2, func(c *Config) *int { return &c.Redfish.SessionBudgetPerBMC },
			"Largest number of Redfish sessions kept open to one BMC; BMCs allow few.").atLeast(1),
		boolOpt("verify_ca_default", true, func(c *Config) *bool { return &c.Redfish.VerifyCADefault },
			"Whether BMC certificates are verified when a node's driver_info has no "+
				"redfish_verify_ca."),
		durOpt("power_state_change_timeout", 60*time.Second, func(c *Config) *time.Duration { return &c.Redfish.PowerStateChangeTimeout },
			"Time to wait for a node to reach the requested power state.").atLeast(int64(time.Second)),
		boolOpt("use_sessions", true, func(c *Config) *bool { return &c.Redfish.UseSessions },
			"Authenticate with Redfish sessions, reused within the budget; false sends HTTP "+
				"basic credentials with every request."),
	}}
}

func ipmiSection() section {
	return section{name: "ipmi", help: "Options of the ipmi hardware type.", options: []*Option{
		intOpt("cipher_suite", 3, func(c *Config) *int { return &c.IPMI.CipherSuite },
			"IPMI 2.0 cipher suite used with BMCs (3 is HMAC-SHA1 with AES-128, which most BMCs "+
				"and ipmi_sim support; 17 is HMAC-SHA256 with AES-128).").between(0, 17),
		durOpt("command_timeout", 2*time.Second, func(c *Config) *time.Duration { return &c.IPMI.CommandTimeout },
			"Time allowed for one IPMI command before it is retried.").atLeast(int64(100 * time.Millisecond)),
		intOpt("retries", 2, func(c *Config) *int { return &c.IPMI.Retries },
			"Number of times an IPMI command that timed out is retried.").atLeast(0),
		durOpt("min_command_interval", 500*time.Millisecond, func(c *Config) *time.Duration { return &c.IPMI.MinCommandInterval },
			"Smallest time between two commands to the same BMC; fractions of a second are "+
				"allowed (0.5)."),
		durOpt("power_state_change_timeout", 60*time.Second, func(c *Config) *time.Duration { return &c.IPMI.PowerStateChangeTimeout },
			"Time to wait for a node to reach the requested power state.").atLeast(int64(time.Second)),
	}}
}
