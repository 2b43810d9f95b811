package config

import "time"

// AgentOpts holds the [agent] section: how the conductor talks to the
// ironic-python-agent (Ironic's [agent] options of the same names).
type AgentOpts struct {
	CommandTimeout      time.Duration
	MaxCommandAttempts  int
	CommandWaitInterval time.Duration
	CommandWaitAttempts int
}

func agentSection() section {
	sec := int64(time.Second)
	return section{name: "agent", help: "How conductors talk to the ironic-python-agent running on nodes being " +
		"deployed or cleaned by the direct deploy interface.", options: []*Option{
		durOpt("command_timeout", 60*time.Second, func(c *Config) *time.Duration { return &c.Agent.CommandTimeout },
			"Timeout of one HTTP request to the agent's command API.").atLeast(sec),
		intOpt("max_command_attempts", 3, func(c *Config) *int { return &c.Agent.MaxCommandAttempts },
			"Number of attempts of a request to the agent that could not connect (a dropped "+
				"connection, a timeout) before the operation fails.").atLeast(1),
		durOpt("command_wait_interval", time.Second, func(c *Config) *time.Duration { return &c.Agent.CommandWaitInterval },
			"Time between two status polls of an agent command the conductor waits for (Ironic's "+
				"default is 6 seconds; the agent's short commands finish in about one).").atLeast(sec / 10),
		intOpt("command_wait_attempts", 600, func(c *Config) *int { return &c.Agent.CommandWaitAttempts },
			"Number of status polls of an agent command the conductor waits for before it fails. "+
				"Long steps (writing an image, erasing disks) are not waited for: the agent's "+
				"heartbeats continue them.").atLeast(1),
	}}
}

// DeployOpts holds the [deploy] section.
type DeployOpts struct {
	EraseDevicesPriority         int
	EraseDevicesMetadataPriority int
}

func deploySection() section {
	return section{name: "deploy", help: "Options of the direct deploy interface.", options: []*Option{
		intOpt("erase_devices_priority", 0, func(c *Config) *int { return &c.Deploy.EraseDevicesPriority },
			"Priority of the agent's erase_devices clean step (overwrites every disk: slow) in "+
				"automated cleaning; 0 disables it. Unlike Ironic, which runs it by default, "+
				"Rivet erases only metadata by default.").atLeast(0),
		intOpt("erase_devices_metadata_priority", 99, func(c *Config) *int { return &c.Deploy.EraseDevicesMetadataPriority },
			"Priority of the agent's erase_devices_metadata clean step (wipes partition tables and "+
				"file system signatures, and the first and last MiB of each disk) in automated "+
				"cleaning; 0 disables it.").atLeast(0),
	}}
}
