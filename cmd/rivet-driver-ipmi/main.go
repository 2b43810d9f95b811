// Command rivet-driver-ipmi serves the ipmi hardware type as a Rivet driver
// plugin. The conductor starts it; it is not meant to be run by hand.
package main

import (
	"log/slog"

	"github.com/rivetmetal/rivet/drivers/ipmi"
	"github.com/rivetmetal/rivet/plugins"
)

func main() {
	log := plugins.NewLogger(slog.LevelInfo)
	plugins.Serve(plugins.ServeConfig{Driver: ipmi.New(log, ipmi.DefaultOptions()), Logger: log})
}
