// Command rivet-driver-acme serves the example Acme driver. Install it as
// rivet-driver-acme in the conductor's plugin_dir.
package main

import (
	"log/slog"

	"github.com/rivetmetal/rivet/plugins"
	"github.com/rivetmetal/rivet/plugins/example/acme"
)

func main() {
	log := plugins.NewLogger(slog.LevelInfo) // before Serve: it captures stderr
	plugins.Serve(plugins.ServeConfig{Driver: acme.New(log, nil), Logger: log})
}
