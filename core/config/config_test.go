package config

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/rivetmetal/rivet/core/logging"
)

func TestDefaults(t *testing.T) {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "localhost"
	}
	want := &Config{
		Default: DefaultOpts{
			Host: host, PinReleaseVersion: "", AuthStrategy: "noauth",
			HTTPBasicAuthUserFile: "/etc/rivet/htpasswd", LogFormat: "text", LogLevel: "info",
			RPCTransport: "json-rpc", HashPartitionExponent: 5,
			HashRingResetInterval: 15 * time.Second, ServiceHeartbeatInterval: 10 * time.Second, ServiceForgetTimeout: 24 * time.Hour,
		},
		API: APIOpts{
			HostIP: "127.0.0.1", Port: 6385, MaxLimit: 1000, TLSMinimumVersion: "1.2",
			MaxRequestBodySize: 1 << 20, MaxHeaderSize: 64 << 10, RateLimitBurst: 100,
			GracefulShutdownTimeout: 30 * time.Second, MaxPatchOperations: 500, BodyTimeout: 60 * time.Second,
			MaxConnections: 1024, TrustedProxies: []string{}, ProjectAdminCanManageOwn: true,
		},
		Conductor: ConductorOpts{
			HeartbeatInterval: 10 * time.Second, HeartbeatTimeout: 60 * time.Second,
			PluginChecksums:         []string{},
			EnabledHardwareTypes:    []string{"fake-hardware", "ipmi", "redfish"},
			GracefulShutdownTimeout: 60 * time.Second, SyncPowerStateInterval: 60 * time.Second,
			SyncPowerStateWorkers: 8, PowerStateSyncMaxRetries: 3, NodeLockedRetryAttempts: 3,
			NodeLockedRetryInterval: time.Second, LeaseDuration: 60 * time.Second,
			DeployCallbackTimeout: 1800 * time.Second, CheckProvisionStateInterval: 60 * time.Second,
			DriverCallTimeout: time.Hour, SoftPowerOffTimeout: 600 * time.Second,
			NodeHistory: true, NodeHistoryMaxEntries: 300, NodeHistoryCleanupInterval: 86400 * time.Second,
			NodeHistoryCleanupBatchCount: 1000,
			InspectWaitTimeout:           1800 * time.Second,
			MaxWaitStep:                  30 * time.Second,
		},
		Database: DatabaseOpts{
			Connection: "sqlite:////var/lib/rivet/rivet.db", MaxOpenConnections: 20,
			MaxIdleConnections: 20, ConnectionMaxLifetime: time.Hour,
			ConnectTimeout: 10 * time.Second, SQLiteBusyTimeout: 5 * time.Second,
		},
		JSONRPC: JSONRPCOpts{
			HostIP: "127.0.0.1", Port: 8089, HTTPBasicAuthUserFile: "/etc/rivet/htpasswd-json-rpc",
			Timeout: 120 * time.Second, MaxRequestBodySize: 4 << 20, MaxHeaderSize: 64 << 10,
			BodyTimeout: 60 * time.Second,
		},
		Redfish: RedfishOpts{
			ConnectionTimeout: 10 * time.Second, SessionBudgetPerBMC: 2, VerifyCADefault: true,
			PowerStateChangeTimeout: 60 * time.Second, UseSessions: true,
		},
		IPMI: IPMIOpts{
			CipherSuite: 3, CommandTimeout: 2 * time.Second, Retries: 2,
			MinCommandInterval: 500 * time.Millisecond, PowerStateChangeTimeout: 60 * time.Second,
		},
		Inspector: InspectorOpts{AddPorts: "pxe", KeepPorts: "all", UpdatePXEEnabled: true,
			Hooks: []string{"ramdisk-error", "validate-interfaces", "ports", "architecture", "cpus", "memory", "root-device", "boot-mode"}},
		InspectionRules: InspectionRulesOpts{MaskSecrets: "always"},
		Agent:           AgentOpts{CommandTimeout: time.Minute, MaxCommandAttempts: 3, CommandWaitInterval: time.Second, CommandWaitAttempts: 600},
		Deploy:          DeployOpts{EraseDevicesMetadataPriority: 99},
		Metrics:         MetricsOpts{APIListen: "127.0.0.1:9608", ConductorListen: "127.0.0.1:9609"},
		Sensors:         SensorOpts{SendSensorDataInterval: 10 * time.Minute, SendSensorDataWorkers: 4, SendSensorDataTimeout: 5 * time.Minute},
		Console:         ConsoleOpts{PortRange: "10000:20000", SocatAddress: "127.0.0.1"},
	}
	got, err := Load(nil, nil)
	if err != nil {
		t.Fatalf("defaults do not validate: %v", err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("defaults (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(Default(), got.Clone()); diff != "" {
		t.Fatalf("Clone (-want +got):\n%s", diff)
	}
}

// TestDeclarations keeps every declaration complete and consistent.
func TestDeclarations(t *testing.T) {
	seenEnv := map[string]string{}
	for _, o := range Options() {
		if o.Help == "" || !strings.HasSuffix(o.Help, ".") {
			t.Errorf("%s: help must be a sentence", o.Key())
		}
		if o.Name != strings.ToLower(o.Name) || strings.ContainsAny(o.Name, " -.") {
			t.Errorf("%s: option names are lower_snake_case", o.Key())
		}
		if prev, dup := seenEnv[o.EnvVar()]; dup {
			t.Errorf("%s and %s share %s", o.Key(), prev, o.EnvVar())
		}
		seenEnv[o.EnvVar()] = o.Key()
		if got, ok := Lookup(o.Section, o.Name); !ok || got != o {
			t.Errorf("%s: Lookup does not find it", o.Key())
		}
		// The default must be valid and survive a round trip through text.
		if p := o.problem(o.def); p != "" && o.defFunc == nil {
			t.Errorf("%s: default is invalid: %s", o.Key(), p)
		}
		v, err := parse(o.Kind, format(o.Kind, o.def))
		if err != nil || format(o.Kind, v) != format(o.Kind, o.def) {
			t.Errorf("%s: default %q does not round-trip: %v", o.Key(), format(o.Kind, o.def), err)
		}
	}
	if diff := cmp.Diff([]string{"DEFAULT", "api", "conductor", "database", "json_rpc", "redfish", "ipmi", "inspector", "inspection_rules", "auto_discovery", "agent", "deploy", "metrics", "sensors", "console"}, Sections()); diff != "" {
		t.Errorf("sections (-want +got):\n%s", diff)
	}
	for name, env := range map[string]string{
		"DEFAULT pin_release_version": "RIVET_DEFAULT_PIN_RELEASE_VERSION",
		"database connection":         "RIVET_DATABASE_CONNECTION",
		"json_rpc port":               "RIVET_JSON_RPC_PORT",
	} {
		sec, opt, _ := strings.Cut(name, " ")
		if o, ok := Lookup(sec, opt); !ok || o.EnvVar() != env {
			t.Errorf("%s: env var is not %s", name, env)
		}
	}
}

// TestLogChoicesMatchLogging keeps [DEFAULT] log_level and log_format in step
// with what core/logging accepts.
func TestLogChoicesMatchLogging(t *testing.T) {
	for _, name := range []string{"log_level", "log_format"} {
		o, _ := Lookup("DEFAULT", name)
		for _, c := range o.Choices {
			format, level := "text", "info"
			if name == "log_level" {
				level = c.Value
			} else {
				format = c.Value
			}
			if _, _, err := logging.New(os.Stderr, format, level); err != nil {
				t.Errorf("%s choice %q rejected by logging: %v", name, c.Value, err)
			}
		}
	}
}
