package plugins

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"

	"github.com/rivetmetal/rivet/plugins/internal/transport"
	"github.com/rivetmetal/rivet/plugins/internal/wire"
)

// parentPollInterval is how often a serving plugin checks that the process
// that started it is still alive.
const parentPollInterval = 500 * time.Millisecond

// ServeConfig configures Serve.
type ServeConfig struct {
	// Driver is the driver to serve. Required.
	Driver Driver
	// Logger receives the SDK's own lines. Default: NewLogger(slog.LevelInfo),
	// created when Serve starts.
	Logger *slog.Logger
	// Protocols lists the protocol majors served. Default Protocols();
	// only tests of negotiation set it.
	Protocols []int
}

// Serve serves cfg.Driver as a go-plugin plugin and never returns: it exits
// the process when the host kills it, when the host (its parent) dies, or
// with status 1 when cfg is invalid. A driver's main is:
//
//	func main() {
//		log := plugins.NewLogger(slog.LevelInfo)
//		plugins.Serve(plugins.ServeConfig{Driver: acme.New(log), Logger: log})
//	}
func Serve(cfg ServeConfig) {
	if cfg.Logger == nil {
		cfg.Logger = NewLogger(slog.LevelInfo)
	}
	protocols := cfg.Protocols
	if len(protocols) == 0 {
		protocols = Protocols()
	}
	if cfg.Driver == nil {
		fmt.Fprintln(os.Stderr, "plugin: ServeConfig.Driver is nil")
		os.Exit(1)
	}
	info, err := Describe(cfg.Driver, protocols)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if os.Getenv(wire.DescribeEnv) == "1" {
		if err := json.NewEncoder(os.Stdout).Encode(info); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	go exitWithParent(os.Getppid(), cfg.Driver, cfg.Logger)

	// go-plugin's own logger must be built before plugin.Serve swaps
	// os.Stderr for a pipe; JSON so the host keeps levels and fields.
	hl := hclog.New(&hclog.LoggerOptions{
		Name:       info.Name,
		Output:     os.Stderr,
		JSONFormat: true,
		Level:      hclog.Info,
	})
	cfg.Logger.Debug("serving", "plugin", info.Name, "version", info.Version, "protocols", protocols)
	plugin.Serve(&plugin.ServeConfig{
		HandshakeConfig:  wire.Handshake,
		VersionedPlugins: pluginSets(cfg.Driver, protocols),
		GRPCServer:       transport.NewServer,
		Logger:           hl,
	})
	closeDriver(cfg.Driver, cfg.Logger)
	os.Exit(0)
}

// Closer is implemented by drivers holding resources that must be released
// before the plugin exits (BMC sessions: a BMC has only a few slots). Serve
// calls Close, with CloseTimeout, whenever it ends the process normally or
// because the host died.
type Closer interface {
	Close(ctx context.Context) error
}

// CloseTimeout bounds a driver's Close at plugin exit.
const CloseTimeout = 5 * time.Second

func closeDriver(d Driver, log *slog.Logger) {
	c, ok := d.(Closer)
	if !ok {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), CloseTimeout)
	defer cancel()
	if err := c.Close(ctx); err != nil {
		log.Warn("closing the driver at exit", "error", err)
	}
}

// exitWithParent ends the plugin when its parent dies. go-plugin has no
// parent-death watch, so a SIGKILLed conductor would otherwise leave its
// plugins running under init. Polling the parent pid is portable;
// Pdeathsig is not used because it fires when the forking OS thread exits,
// which in a Go host is not the process exiting.
func exitWithParent(ppid int, d Driver, log *slog.Logger) {
	if ppid <= 1 {
		// Already an orphan, or the host is a container's PID 1, whose
		// death ends every process in the container anyway.
		return
	}
	for {
		time.Sleep(parentPollInterval)
		if os.Getppid() != ppid {
			log.Warn("parent process is gone; exiting", "parent_pid", ppid)
			closeDriver(d, log)
			os.Exit(3)
		}
	}
}
