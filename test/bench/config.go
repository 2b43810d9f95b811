package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// option is one INI option: section, key, value.
type option struct{ section, key, value string }

// renderConfig renders opts as INI, grouping consecutive options of one
// section under its header and leaving out empty values (the default).
func renderConfig(opts []option) string {
	var b strings.Builder
	section := ""
	for _, o := range opts {
		if o.value == "" {
			continue
		}
		if o.section != section {
			if section != "" {
				b.WriteByte('\n')
			}
			section = o.section
			fmt.Fprintf(&b, "[%s]\n", section)
		}
		fmt.Fprintf(&b, "%s = %s\n", o.key, o.value)
	}
	return b.String()
}

// deployConfig is what the suite varies between its services.
type deployConfig struct {
	dbURL     string
	pluginDir string
	apiPort   int
	rpcPort   int
	// syncInterval and syncWorkers are [conductor] sync_power_state_interval
	// and sync_power_state_workers (0: Rivet's defaults).
	syncInterval time.Duration
	syncWorkers  int
	// group is [conductor] conductor_group.
	group string
	// allInOne runs `rivet all-in-one` (the API and a conductor in one
	// process, in-process RPC) instead of rivet api + rivet conductor.
	allInOne bool
}

// serviceConfig is the configuration of one rivet api and one conductor
// on loopback: noauth, JSON-RPC, fake-hardware from the plugin directory,
// PostgreSQL. Every key is one the upgrade tests' deployments use too.
func serviceConfig(c deployConfig) string {
	opts := []option{
		{"DEFAULT", "host", "127.0.0.1"},
		{"DEFAULT", "auth_strategy", "noauth"},
		{"DEFAULT", "log_level", "info"},
		{"DEFAULT", "log_format", "json"},
		{"DEFAULT", "rpc_transport", "json-rpc"},
		{"api", "host_ip", "127.0.0.1"},
		{"api", "port", strconv.Itoa(c.apiPort)},
		{"conductor", "enabled_hardware_types", "fake-hardware"},
		{"conductor", "plugin_dir", c.pluginDir},
		{"conductor", "conductor_group", c.group},
		{"conductor", "heartbeat_interval", "2"},
		{"conductor", "heartbeat_timeout", "30"},
		{"conductor", "graceful_shutdown_timeout", "10"},
		{"conductor", "check_provision_state_interval", "5"},
		{"conductor", "sync_power_state_interval", secondsOrEmpty(c.syncInterval)},
		{"conductor", "sync_power_state_workers", intOrEmpty(c.syncWorkers)},
		{"database", "connection", c.dbURL},
		{"json_rpc", "host_ip", "127.0.0.1"},
		{"json_rpc", "port", strconv.Itoa(c.rpcPort)},
	}
	return renderConfig(opts)
}

func secondsOrEmpty(d time.Duration) string {
	if d <= 0 {
		return ""
	}
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64)
}

func intOrEmpty(n int) string {
	if n <= 0 {
		return ""
	}
	return strconv.Itoa(n)
}

func writeFile(path, text string) error { return os.WriteFile(path, []byte(text), 0o600) }
