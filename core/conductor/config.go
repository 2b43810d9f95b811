package conductor

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/rivetmetal/rivet/core/conductor/powersync"
	"github.com/rivetmetal/rivet/core/conductor/workers"
	"github.com/rivetmetal/rivet/core/config"
	"github.com/rivetmetal/rivet/core/rpc/jsonrpc"
)

// Config tunes a Service. ConfigFrom fills it from the [conductor] and
// [DEFAULT] options.
type Config struct {
	// DriverCallTimeout bounds each call into a driver ([conductor]
	// driver_call_timeout); 0 means no bound beyond the driver's own. A
	// power action with a longer timeout gets that timeout plus a minute.
	DriverCallTimeout time.Duration
	// SoftPowerOffTimeout is the timeout of a soft power off or soft
	// reboot asked without one ([conductor] soft_power_off_timeout); 0
	// leaves the wait to the driver's default.
	SoftPowerOffTimeout time.Duration
	// Hostname is the name the conductor registers and holds leases as
	// (RegisteredName).
	Hostname string
	// Group is [conductor] conductor_group (stored lowercased).
	Group string
	// HeartbeatInterval and HeartbeatTimeout are Ironic's options: a
	// conductor is live while its heartbeat is younger than the timeout.
	HeartbeatInterval, HeartbeatTimeout time.Duration
	// ServiceForgetTimeout is [DEFAULT] service_forget_timeout: how long a
	// service that stopped heartbeating still counts for the automatic
	// pin and the finalized release (0 means
	// db.DefaultServiceForgetTimeout). The hash ring never reads it.
	ServiceForgetTimeout time.Duration
	// LeaseDuration is a lease's lifetime; it is renewed every third of it.
	LeaseDuration time.Duration
	// LockRetryAttempts and LockRetryInterval bound waiting for a lease
	// another conductor holds before answering NodeLocked.
	LockRetryAttempts int
	LockRetryInterval time.Duration
	// CheckInterval is [conductor] check_provision_state_interval: the
	// takeover and timeout periodic.
	CheckInterval time.Duration
	// DeployCallbackTimeout fails nodes waiting in "wait call-back" for
	// longer; 0 waits forever.
	DeployCallbackTimeout time.Duration
	// MaxWaitStep caps the pause of a service step named wait
	// ([conductor] max_conductor_wait_step_seconds).
	MaxWaitStep time.Duration
	// AutomatedClean runs clean steps on provide and after tear down.
	AutomatedClean bool
	// GracefulShutdownTimeout bounds waiting for in-flight work at Stop.
	GracefulShutdownTimeout time.Duration
	// HashPartitionExponent and RingResetInterval configure the hash ring.
	HashPartitionExponent int
	RingResetInterval     time.Duration
	// PowerSync configures power-state sync; Interval 0 disables it.
	PowerSync powersync.Config
	// PowerSyncMaxRetries is how many consecutive syncs may see a power
	// state differing from the database before it is recorded.
	PowerSyncMaxRetries int
	// Workers sizes the shared worker pool.
	Workers workers.Config
	// BootHTTPAddress is [conductor] boot_http_address: host:port of the
	// HTTP server for iPXE scripts (core/conductor/bootserver); "" serves
	// none.
	BootHTTPAddress string
	// DefaultDeploy is [conductor] default_deploy_interface: the deploy
	// interface new nodes get by default ("" or "ramdisk": ramdisk).
	DefaultDeploy string
	// History configures the node history (history.go).
	History HistoryConfig
	// Sensors configures the sensor data collection (sensors.go).
	Sensors SensorConfig
	// InspectWaitTimeout fails nodes waiting in "inspect wait" for longer
	// ([conductor] inspect_wait_timeout); 0 waits forever.
	InspectWaitTimeout time.Duration
	// Inspector is the [inspector] section: in-band inspection.
	Inspector config.InspectorOpts
	// InspectionRules is the [inspection_rules] section: built-in rules
	// and the masking of secrets in what rules see.
	InspectionRules config.InspectionRulesOpts
	// AutoDiscovery is [auto_discovery]: with Enabled, continue_inspection
	// also takes a node in enroll (one the API just enrolled).
	AutoDiscovery config.AutoDiscoveryOpts
	// Agent configures the client of the ironic-python-agent ([agent]);
	// zero values take agentclient's defaults.
	Agent AgentConfig
	// EraseDevicesPriority and EraseDevicesMetadataPriority are [deploy]
	// erase_devices_priority and erase_devices_metadata_priority: the
	// agent's erase steps in automated cleaning (0: skipped).
	EraseDevicesPriority, EraseDevicesMetadataPriority int
	// Console is the [console] section.
	Console ConsoleConfig
}

// RegisteredName is the name a conductor registers as: [DEFAULT] host, or
// host:port when [json_rpc] port is not the default 8089 (as Ironic does
// with RPC 1.58+), so the name is also the JSON-RPC address.
func RegisteredName(host string, port int) string {
	if port == 0 || port == jsonrpc.DefaultPort {
		return host
	}
	return net.JoinHostPort(host, strconv.Itoa(port))
}

// ConfigFrom builds a Config from a loaded configuration.
func ConfigFrom(c *config.Config) Config {
	port := c.JSONRPC.Port
	if c.Default.RPCTransport == "local" {
		port = 0
	}
	ps := powersync.DefaultConfig()
	ps.Interval = c.Conductor.SyncPowerStateInterval
	ps.Spread = ps.Interval / 2
	ps.Workers = c.Conductor.SyncPowerStateWorkers
	if ps.Interval > 0 && ps.CallTimeout >= ps.Interval {
		ps.CallTimeout = ps.Interval
	}
	return Config{
		Hostname:                RegisteredName(c.Default.Host, port),
		Group:                   c.Conductor.ConductorGroup,
		HeartbeatInterval:       c.Conductor.HeartbeatInterval,
		HeartbeatTimeout:        c.Conductor.HeartbeatTimeout,
		ServiceForgetTimeout:    c.Default.ServiceForgetTimeout,
		LeaseDuration:           c.Conductor.LeaseDuration,
		LockRetryAttempts:       c.Conductor.NodeLockedRetryAttempts,
		LockRetryInterval:       c.Conductor.NodeLockedRetryInterval,
		CheckInterval:           c.Conductor.CheckProvisionStateInterval,
		DeployCallbackTimeout:   c.Conductor.DeployCallbackTimeout,
		MaxWaitStep:             c.Conductor.MaxWaitStep,
		AutomatedClean:          c.Conductor.AutomatedClean,
		GracefulShutdownTimeout: c.Conductor.GracefulShutdownTimeout,
		HashPartitionExponent:   c.Default.HashPartitionExponent,
		RingResetInterval:       c.Default.HashRingResetInterval,
		PowerSync:               ps,
		PowerSyncMaxRetries:     c.Conductor.PowerStateSyncMaxRetries,
		Workers:                 workers.DefaultConfig(),
		BootHTTPAddress:         c.Conductor.BootHTTPAddress,
		DefaultDeploy:           c.Conductor.DefaultDeployInterface,
		DriverCallTimeout:       c.Conductor.DriverCallTimeout,
		SoftPowerOffTimeout:     c.Conductor.SoftPowerOffTimeout,
		History: HistoryConfig{Enabled: c.Conductor.NodeHistory, MaxEntries: c.Conductor.NodeHistoryMaxEntries,
			CleanupInterval: c.Conductor.NodeHistoryCleanupInterval, CleanupBatch: c.Conductor.NodeHistoryCleanupBatchCount},
		InspectWaitTimeout: c.Conductor.InspectWaitTimeout,
		Sensors: SensorConfig{Enabled: c.Sensors.SendSensorData, Interval: c.Sensors.SendSensorDataInterval,
			Workers: c.Sensors.SendSensorDataWorkers, Timeout: c.Sensors.SendSensorDataTimeout},
		Inspector:       c.Inspector,
		InspectionRules: c.InspectionRules,
		AutoDiscovery:   c.AutoDiscovery,
		Agent: AgentConfig{CommandTimeout: c.Agent.CommandTimeout, MaxAttempts: c.Agent.MaxCommandAttempts,
			PollInterval: c.Agent.CommandWaitInterval, PollAttempts: c.Agent.CommandWaitAttempts},
		EraseDevicesPriority:         c.Deploy.EraseDevicesPriority,
		EraseDevicesMetadataPriority: c.Deploy.EraseDevicesMetadataPriority,
		Console:                      consoleConfig(c.Console),
	}
}

// consoleConfig converts [console]; Load validated it.
func consoleConfig(c config.ConsoleOpts) ConsoleConfig {
	lo, hi, _ := config.ParsePortRange(c.PortRange)
	return ConsoleConfig{Address: strings.TrimSpace(c.SocatAddress), PortLow: lo, PortHigh: hi}
}

// Validate reports every problem with c.
func (c Config) Validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf("conductor: "+format, args...)) }
	if c.Hostname == "" {
		bad("Hostname is required")
	}
	if c.HeartbeatInterval <= 0 || c.HeartbeatTimeout <= c.HeartbeatInterval {
		bad("heartbeat_timeout %v must be greater than heartbeat_interval %v (> 0)", c.HeartbeatTimeout, c.HeartbeatInterval)
	}
	if c.LeaseDuration <= 0 {
		bad("lease_duration %v must be positive", c.LeaseDuration)
	}
	if c.LockRetryAttempts < 0 || c.LockRetryInterval < 0 {
		bad("node_locked_retry_attempts and node_locked_retry_interval must not be negative")
	}
	if c.CheckInterval <= 0 {
		bad("check_provision_state_interval %v must be positive", c.CheckInterval)
	}
	if c.HashPartitionExponent < 1 || c.RingResetInterval <= 0 {
		bad("hash_partition_exponent and hash_ring_reset_interval must be positive")
	}
	if c.History.MaxEntries < 0 || c.History.CleanupInterval < 0 || c.History.CleanupBatch < 0 {
		bad("node_history_max_entries, node_history_cleanup_interval and node_history_cleanup_batch_count must not be negative")
	}
	if c.SoftPowerOffTimeout < 0 {
		bad("soft_power_off_timeout %v must not be negative", c.SoftPowerOffTimeout)
	}
	if c.BootHTTPAddress != "" {
		if _, _, err := net.SplitHostPort(c.BootHTTPAddress); err != nil {
			bad("boot_http_address %q is not host:port", c.BootHTTPAddress)
		}
	}
	errs = append(errs, c.Workers.Validate(), c.PowerSync.Validate())
	return errors.Join(errs...)
}
