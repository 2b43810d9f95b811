// Command rivet-driver-redfish serves the redfish hardware type as a Rivet
// driver plugin. The conductor starts it; it is not meant to be run by hand.
package main

import (
	"log/slog"

	"github.com/rivetmetal/rivet/drivers/redfish"
	"github.com/rivetmetal/rivet/plugins"
)

func main() {
	log := plugins.NewLogger(slog.LevelInfo) // before Serve: it captures stderr
	drv := redfish.New(log, redfish.DefaultOptions())
	go redfish.LogoutOnSignal(drv) // plugins.Serve has no shutdown hook
	plugins.Serve(plugins.ServeConfig{Driver: drv, Logger: log})
}
