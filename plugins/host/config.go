package host

import (
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/rivetmetal/rivet/plugins"
)

// Command is how to start a plugin process.
type Command struct {
	Path string
	Args []string
	// Env is added to the host's environment for the plugin process.
	Env []string
}

// Config configures a Manager. The zero value of every field but Logger
// means its documented default.
type Config struct {
	// PluginDir holds third-party or replacement plugins named
	// rivet-driver-<driver>; they take precedence over BuiltIn entries of
	// the same driver name. "" disables the scan.
	PluginDir string
	// BuiltIn maps a driver name to the command serving it, normally the
	// rivet binary re-executed as `rivet plugin serve <driver>`.
	BuiltIn map[string]Command
	// Checksums pins a driver's binary: driver name → lower-case hex
	// sha256. A pinned binary with another checksum is refused.
	Checksums map[string]string
	// Logger receives the host's lines and the plugins' forwarded lines.
	// Default: slog.Default().
	Logger *slog.Logger
	// HostVersion is the conductor's release, passed to plugins.
	HostVersion string
	// Protocols lists the protocol majors the host speaks. Default
	// plugins.Protocols().
	Protocols []int
	// Interfaces lists, per interface, the API versions the host speaks.
	// Default plugins.InterfaceVersions().
	Interfaces map[plugins.Interface][]int
	// RestartBackoff is the wait before the second consecutive restart
	// attempt; it doubles per failure up to MaxRestartBackoff. The first
	// restart after a crash is immediate. Defaults 200ms and 30s.
	RestartBackoff    time.Duration
	MaxRestartBackoff time.Duration
	// StableAfter is how long a plugin process must have run before a
	// successful call clears its count of consecutive crashes, and so the
	// backoff: a plugin that serves a few calls and crashes again is a
	// crash loop too. Default 1m.
	StableAfter time.Duration
	// WatchInterval is how often plugin binaries are checked for
	// replacement. Default 2s; negative disables the watch.
	WatchInterval time.Duration
	// DrainTimeout bounds how long a replaced plugin may finish its
	// in-flight calls before it is killed. Default 60s.
	DrainTimeout time.Duration
	// StartTimeout bounds a plugin's start and negotiation. Default 30s.
	StartTimeout time.Duration
	// Observer, when set, is told about every driver call and plugin
	// restart (the conductor's metrics).
	Observer Observer
}

// Observer watches a Manager's plugins. Its methods are called
// concurrently and must not block.
type Observer interface {
	// DriverCall reports one call through a plugin: the hardware type,
	// the call's name ("get power state", …), its duration and its error.
	DriverCall(hardwareType, call string, d time.Duration, err error)
	// PluginRestarted reports a plugin process started again after its
	// first start (after a crash or for a replaced binary).
	PluginRestarted(driver string)
}

// withDefaults returns a copy with defaults filled in, or an error naming
// the invalid field.
func (c Config) withDefaults() (Config, error) {
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if len(c.Protocols) == 0 {
		c.Protocols = plugins.Protocols()
	}
	c.Protocols = slices.Clone(c.Protocols)
	slices.Sort(c.Protocols)
	if c.Interfaces == nil {
		c.Interfaces = plugins.InterfaceVersions()
	}
	if c.RestartBackoff == 0 {
		c.RestartBackoff = 200 * time.Millisecond
	}
	if c.MaxRestartBackoff == 0 {
		c.MaxRestartBackoff = 30 * time.Second
	}
	if c.StableAfter == 0 {
		c.StableAfter = time.Minute
	}
	if c.WatchInterval == 0 {
		c.WatchInterval = 2 * time.Second
	}
	if c.DrainTimeout == 0 {
		c.DrainTimeout = 60 * time.Second
	}
	if c.StartTimeout == 0 {
		c.StartTimeout = 30 * time.Second
	}
	var errs []error
	if c.RestartBackoff < 0 || c.MaxRestartBackoff < c.RestartBackoff {
		errs = append(errs, fmt.Errorf("plugin host: RestartBackoff %v must be >= 0 and <= MaxRestartBackoff %v", c.RestartBackoff, c.MaxRestartBackoff))
	}
	for _, v := range c.Protocols {
		if v < 1 {
			errs = append(errs, fmt.Errorf("plugin host: protocol version %d must be >= 1", v))
		}
	}
	for name, cmd := range c.BuiltIn {
		if cmd.Path == "" {
			errs = append(errs, fmt.Errorf("plugin host: built-in driver %s has no command path", name))
		}
	}
	return c, errors.Join(errs...)
}

func (c Config) backoff(failures int) time.Duration {
	if failures <= 1 {
		return 0
	}
	d := c.RestartBackoff
	for i := 2; i < failures && d < c.MaxRestartBackoff; i++ {
		d *= 2
	}
	return min(d, c.MaxRestartBackoff)
}
