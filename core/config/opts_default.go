package config

import (
	"os"
	"strings"
	"time"

	"github.com/rivetmetal/rivet/core/logging"
	"github.com/rivetmetal/rivet/core/release"
)

// DefaultOpts holds the [DEFAULT] section. Each field is declared, with its
// default, rules and help, in defaultSection.
type DefaultOpts struct {
	Host                     string
	PinReleaseVersion        string
	AuthStrategy             string
	HTTPBasicAuthUserFile    string
	CredentialKeyFile        string
	LogFormat                string
	LogLevel                 string
	RPCTransport             string
	HashPartitionExponent    int
	HashRingResetInterval    time.Duration
	ServiceHeartbeatInterval time.Duration
	ServiceForgetTimeout     time.Duration
}

// authChoices are the authentication strategies of the REST API and JSON-RPC.
var authChoices = []Choice{
	{"noauth", "no authentication; never use it in production"},
	{"http_basic", "HTTP basic authentication against an Apache htpasswd file of bcrypt hashes"},
}

func hostname() any {
	if h, err := os.Hostname(); err == nil && h != "" {
		return h
	}
	return "localhost"
}

func words(vals []string) []Choice {
	cs := make([]Choice, len(vals))
	for i, v := range vals {
		cs[i] = Choice{Value: v}
	}
	return cs
}

func defaultSection() section {
	return section{name: "DEFAULT", help: "Options shared by every Rivet service.", options: []*Option{
		strOpt("host", "", func(c *Config) *string { return &c.Default.Host },
			"Name of this service's host. Conductors are placed in the hash ring and "+
				"hold node leases under this name, so it must be unique among the services of a "+
				"deployment. APIs on other hosts dial a conductor's JSON-RPC at this name, so there it "+
				"must resolve (DNS or /etc/hosts) to the conductor's [json_rpc] host_ip; an API on the "+
				"conductor's own host dials its [json_rpc] host_ip directly, and an API that cannot "+
				"resolve or reach a conductor answers 503 naming it. A name (letters, digits, \"-\", \".\", "+
				"\"_\") or an IP address. Defaults to the machine's hostname.").
			computed(hostname, "<hostname>").required().check(checkHostName),
		strOpt("pin_release_version", "", func(c *Config) *string { return &c.Default.PinReleaseVersion },
			"Used for rolling upgrades. Pins the REST API maximum microversion, the conductor "+
				"RPC API version and the versions of objects written to the database to those of "+
				"a release, so that services of that release keep working. Empty means the latest "+
				"versions of this code; \"auto\" follows the oldest release among the services "+
				"registered in the database, heartbeating or not, until they are forgotten (see "+
				"service_forget_timeout). "+
				"Valid values: "+strings.Join(release.Default().PinValues(), ", ")+
				", or a release string of one as `rivet version` prints it (e.g. 0.1.1: a "+
				"point release pins its series).").
			reloadable(),
		strOpt("auth_strategy", "noauth", func(c *Config) *string { return &c.Default.AuthStrategy },
			"Authentication strategy of the REST API, and of JSON-RPC unless [json_rpc] "+
				"auth_strategy is set.").
			choices(authChoices...),
		strOpt("http_basic_auth_user_file", "/etc/rivet/htpasswd", func(c *Config) *string { return &c.Default.HTTPBasicAuthUserFile },
			"Path to the Apache htpasswd file used when auth_strategy is http_basic. The file "+
				"is re-read on SIGHUP (a file that fails to load is logged and the users loaded "+
				"before stay); a new path needs a restart."),
		strOpt("credential_key_file", "", func(c *Config) *string { return &c.Default.CredentialKeyFile },
			"Path to the key file that encrypts BMC credentials at rest: the secret values of node "+
				"driver_info (keys containing password, secret, token, ...) are stored AES-256-GCM "+
				"encrypted. One key a line, \"<key-id>:<base64 of 32 random bytes>\" (make one with "+
				"`head -c 32 /dev/urandom | base64`); the first line encrypts, later lines are old keys "+
				"still accepted for decryption until `rivet dbsync rotate-key` has re-encrypted "+
				"everything with the first. Every API and conductor service and dbsync must use the "+
				"same file. Empty stores credentials unencrypted (a warning is logged at start). "+
				"See docs/admin/security.md."),
		strOpt("log_format", "text", func(c *Config) *string { return &c.Default.LogFormat },
			"Format of log records written to standard error.").
			choices(Choice{"text", "logfmt key=value lines"}, Choice{"json", "one JSON object per line"}),
		strOpt("log_level", "info", func(c *Config) *string { return &c.Default.LogLevel },
			"Lowest level of log records that are written.").
			choices(words(logging.Levels)...).reloadable(),
		strOpt("rpc_transport", "json-rpc", func(c *Config) *string { return &c.Default.RPCTransport },
			"RPC transport between the API and conductor services.").
			choices(Choice{"json-rpc", "JSON-RPC over HTTP, see [json_rpc]"},
				Choice{"local", "in-process calls; only for all-in-one and dev, where API and conductor share a process"}),
		intOpt("hash_partition_exponent", 5, func(c *Config) *int { return &c.Default.HashPartitionExponent },
			"Exponent of the number of partitions each conductor gets in the hash ring "+
				"(2^hash_partition_exponent). Larger values spread nodes more evenly and move "+
				"fewer of them when conductors come and go, at the cost of memory and CPU. "+
				"Every service of a deployment must use the same value.").
			between(1, 16),
		durOpt("hash_ring_reset_interval", 15*time.Second, func(c *Config) *time.Duration { return &c.Default.HashRingResetInterval },
			"Time after which the hash ring is considered outdated and is rebuilt on its next use. "+
				"A conductor stopping (SIGTERM) while a peer can take its nodes keeps its JSON-RPC listener "+
				"open this long, refusing calls, so no API still routes to a closed port.").
			atLeast(int64(time.Second)),
		durOpt("service_heartbeat_interval", 10*time.Second, func(c *Config) *time.Duration { return &c.Default.ServiceHeartbeatInterval },
			"Interval at which every service (API and conductor) records its release and "+
				"service version as alive; automatic pinning and upgrade checks read these records.").
			atLeast(int64(time.Second)),
		durOpt("service_forget_timeout", 24*time.Hour, func(c *Config) *time.Duration { return &c.Default.ServiceForgetTimeout },
			"Time after its last heartbeat (or its clean stop) at which a service stops counting for "+
				"rolling upgrades. Until then a service that stopped heartbeating is \"unknown\", not gone: "+
				"pin_release_version = auto still follows its release, the finalized release does not pass it "+
				"and online data migrations wait for it, so a paused or partitioned service, or a database outage, "+
				"never ends the rollback window by itself. `rivet upgrade forget BINARY HOST` lets a service go at "+
				"once. Must be greater than [conductor] heartbeat_timeout; the hash ring and node takeover use "+
				"heartbeat_timeout alone.").
			atLeast(int64(time.Minute)),
	}}
}
