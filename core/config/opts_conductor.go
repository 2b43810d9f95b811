package config

import (
	"encoding/hex"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"
)

// ConductorOpts holds the [conductor] section. Each field is declared, with
// its default, rules and help, in conductorSection.
type ConductorOpts struct {
	HeartbeatInterval            time.Duration
	HeartbeatTimeout             time.Duration
	ConductorGroup               string
	PluginDir                    string
	PluginChecksums              []string
	EnabledHardwareTypes         []string
	GracefulShutdownTimeout      time.Duration
	SyncPowerStateInterval       time.Duration
	SyncPowerStateWorkers        int
	PowerStateSyncMaxRetries     int
	NodeLockedRetryAttempts      int
	NodeLockedRetryInterval      time.Duration
	LeaseDuration                time.Duration
	AutomatedClean               bool
	DeployCallbackTimeout        time.Duration
	CheckProvisionStateInterval  time.Duration
	DriverCallTimeout            time.Duration
	SoftPowerOffTimeout          time.Duration
	BootHTTPAddress              string
	DefaultDeployInterface       string
	NodeHistory                  bool
	NodeHistoryMaxEntries        int
	NodeHistoryCleanupInterval   time.Duration
	NodeHistoryCleanupBatchCount int
	InspectWaitTimeout           time.Duration
	MaxWaitStep                  time.Duration
}

func conductorSection() section {
	sec := int64(time.Second)
	return section{name: "conductor", help: "Options of the conductor service.", options: []*Option{
		durOpt("heartbeat_interval", 10*time.Second, func(c *Config) *time.Duration { return &c.Conductor.HeartbeatInterval },
			"Interval at which the conductor records in the database that it is alive.").atLeast(sec),
		durOpt("heartbeat_timeout", 60*time.Second, func(c *Config) *time.Duration { return &c.Conductor.HeartbeatTimeout },
			"Time after its last heartbeat at which a conductor is considered dead: it leaves "+
				"the hash ring and its node leases may be taken over. Must be greater than "+
				"heartbeat_interval.").atLeast(sec),
		strOpt("conductor_group", "", func(c *Config) *string { return &c.Conductor.ConductorGroup },
			"Name of the conductor group this conductor belongs to; it manages only nodes "+
				"whose conductor_group matches (case-insensitive). Empty is the default group.").
			check(func(v any) string {
				if n := len(v.(string)); n > 255 {
					return fmt.Sprintf("value is %d characters long, more than 255", n)
				}
				return ""
			}),
		strOpt("plugin_dir", "", func(c *Config) *string { return &c.Conductor.PluginDir },
			"Directory searched for rivet-driver-* plugin binaries, which take precedence over "+
				"the built-in drivers. Empty means the directory holding the rivet executable."),
		listOpt("plugin_checksums", []string{}, func(c *Config) *[]string { return &c.Conductor.PluginChecksums },
			"Pins plugin binaries to checksums, as a list of name:sha256 (hex) items, for "+
				"example rivet-driver-redfish:9f86d0…; a listed plugin whose binary does not match "+
				"is not started.").
			check(checkPluginChecksums),
		listOpt("enabled_hardware_types", []string{"fake-hardware", "ipmi", "redfish"}, func(c *Config) *[]string { return &c.Conductor.EnabledHardwareTypes },
			"Hardware types this conductor loads and serves.").required(),
		durOpt("graceful_shutdown_timeout", 60*time.Second, func(c *Config) *time.Duration { return &c.Conductor.GracefulShutdownTimeout },
			"On SIGTERM, how long the conductor waits for in-flight tasks to finish after it "+
				"has stopped taking work, before releasing its leases and exiting."),
		durOpt("sync_power_state_interval", 60*time.Second, func(c *Config) *time.Duration { return &c.Conductor.SyncPowerStateInterval },
			"Interval between power state syncs of the nodes this conductor manages. 0 "+
				"disables the sync."),
		intOpt("sync_power_state_workers", 8, func(c *Config) *int { return &c.Conductor.SyncPowerStateWorkers },
			"Largest number of power state syncs that run at once (one at a time per BMC).").atLeast(1),
		intOpt("power_state_sync_max_retries", 3, func(c *Config) *int { return &c.Conductor.PowerStateSyncMaxRetries },
			"Number of consecutive syncs that may find a node's power state differing from the "+
				"database before the database is updated to match the hardware.").atLeast(0),
		intOpt("node_locked_retry_attempts", 3, func(c *Config) *int { return &c.Conductor.NodeLockedRetryAttempts },
			"Number of attempts to take a node's lease when another conductor holds it.").atLeast(0),
		durOpt("node_locked_retry_interval", time.Second, func(c *Config) *time.Duration { return &c.Conductor.NodeLockedRetryInterval },
			"Time between attempts to take a node's lease."),
		durOpt("lease_duration", 60*time.Second, func(c *Config) *time.Duration { return &c.Conductor.LeaseDuration },
			"Lifetime of a node lease; the holder renews it while it works, and a lease that "+
				"expires may be taken over by another conductor.").atLeast(sec),
		boolOpt("automated_clean", false, func(c *Config) *bool { return &c.Conductor.AutomatedClean },
			"Clean nodes automatically when they are made available and after they are "+
				"unprovisioned. A node's own automated_clean (API 1.47), when set, overrides it."),
		durOpt("deploy_callback_timeout", 1800*time.Second, func(c *Config) *time.Duration { return &c.Conductor.DeployCallbackTimeout },
			"Time to wait for a deploy ramdisk to call back before failing the deployment. "+
				"0 waits forever."),
		durOpt("max_conductor_wait_step_seconds", 30*time.Second, func(c *Config) *time.Duration { return &c.Conductor.MaxWaitStep },
			"Longest pause a service step named wait may ask for with its seconds argument; a "+
				"longer one waits this long, with a warning in the node's history.").atLeast(0),
		durOpt("inspect_wait_timeout", 1800*time.Second, func(c *Config) *time.Duration { return &c.Conductor.InspectWaitTimeout },
			"Time a node waits in \"inspect wait\" for its ramdisk agent's inspection data "+
				"before inspection fails; 0 waits forever.").atLeast(0),
		durOpt("driver_call_timeout", time.Hour, func(c *Config) *time.Duration { return &c.Conductor.DriverCallTimeout },
			"Upper bound of one call from the conductor into a driver plugin (a power change, a "+
				"deploy, a clean step), beyond the driver's own BMC timeouts, so that a hung plugin "+
				"cannot hold a node's lease forever. The call fails with a timeout error, recorded in "+
				"the node's last_error. 0 disables the bound."),
		durOpt("soft_power_off_timeout", 600*time.Second, func(c *Config) *time.Duration { return &c.Conductor.SoftPowerOffTimeout },
			"Time a soft power off or soft reboot waits for the node's operating system to "+
				"power the node off (and, for a reboot, for the node to be on again) when the "+
				"request gives no timeout (REST API 1.27 and later). The action fails into "+
				"last_error when it is exceeded; no hard power off is ever done instead.").atLeast(sec),
		durOpt("check_provision_state_interval", 60*time.Second, func(c *Config) *time.Duration { return &c.Conductor.CheckProvisionStateInterval },
			"Interval between checks for provisioning timeouts and for nodes whose lease "+
				"holder is dead.").atLeast(sec),
		strOpt("boot_http_address", "", func(c *Config) *string { return &c.Conductor.BootHTTPAddress },
			"host:port on which the conductor serves per-node iPXE scripts over HTTP, for the "+
				"network-boot ramdisk deploy (ipmi); for example 192.0.2.10:8088, or :8088 for every "+
				"address. DHCP must hand iPXE the boot file http://ADDRESS/ipxe/${net0/mac}, ADDRESS "+
				"being this value. Any conductor serves any node: scripts only read the database and "+
				"contain only the image URLs and kernel parameters. The server has no authentication: "+
				"bind it on the provisioning network. Empty disables it.").
			check(checkHostPort),
		strOpt("default_deploy_interface", "", func(c *Config) *string { return &c.Conductor.DefaultDeployInterface },
			"Deploy interface a new node gets when it names none, for every hardware type but "+
				"fake-hardware: ramdisk (boot the node's instance_info boot_iso or kernel and ramdisk "+
				"and call it active) or direct (boot the ironic-python-agent and have it write "+
				"instance_info's image to disk), Ironic's default. Metal3's baremetal-operator "+
				"leaves deploy_interface unset for image deploys and needs direct. Empty means ramdisk.").
			check(func(v any) string {
				switch v.(string) {
				case "", "ramdisk", "direct":
					return ""
				}
				return fmt.Sprintf("%q is not a deploy interface: use ramdisk or direct", v)
			}),
		boolOpt("node_history", true, func(c *Config) *bool { return &c.Conductor.NodeHistory },
			"Record node history: every failure that sets a node's last_error, every provision "+
				"and power state transition, takeovers and the actions they interrupted, with the "+
				"conductor and the request id (GET /v1/nodes/{node}/history, API 1.78). Entries are "+
				"not written while pin_release_version names a release without node history. The "+
				"clean-up still runs when this is off."),
		intOpt("node_history_max_entries", 300, func(c *Config) *int { return &c.Conductor.NodeHistoryMaxEntries },
			"Most history entries kept per node; the clean-up deletes the oldest beyond it.").atLeast(0),
		durOpt("node_history_cleanup_interval", 86400*time.Second, func(c *Config) *time.Duration { return &c.Conductor.NodeHistoryCleanupInterval },
			"Interval at which the conductor deletes history entries beyond node_history_max_entries "+
				"and those of deleted nodes. 0 disables the clean-up."),
		intOpt("node_history_cleanup_batch_count", 1000, func(c *Config) *int { return &c.Conductor.NodeHistoryCleanupBatchCount },
			"Most history entries one clean-up deletes; 0 means no bound.").atLeast(0),
	}}
}

// checkHostPort requires host:port with a numeric port; host may be empty
// (every address).
func checkHostPort(v any) string {
	s := v.(string)
	if s == "" {
		return ""
	}
	_, port, err := net.SplitHostPort(s)
	if err != nil {
		return fmt.Sprintf("%q is not host:port", s)
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return fmt.Sprintf("%q: port %q is not a number from 0 to 65535", s, port)
	}
	return ""
}

// checkPluginChecksums requires every item to be name:<64 hex digits>.
func checkPluginChecksums(v any) string {
	var bad []string
	for _, item := range v.([]string) {
		name, sum, ok := strings.Cut(item, ":")
		if b, err := hex.DecodeString(sum); !ok || name == "" || err != nil || len(b) != 32 {
			bad = append(bad, fmt.Sprintf("%q", item))
		}
	}
	if len(bad) > 0 {
		return fmt.Sprintf("%s: want name:sha256 items, the checksum as 64 hex digits", strings.Join(bad, ", "))
	}
	return ""
}
