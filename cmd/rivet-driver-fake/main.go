// Command rivet-driver-fake serves the fake-hardware driver as a Rivet
// driver plugin. The conductor starts it; it is not meant to be run by hand.
package main

import (
	"log/slog"

	"github.com/rivetmetal/rivet/drivers/fake"
	"github.com/rivetmetal/rivet/plugins"
)

func main() {
	log := plugins.NewLogger(slog.LevelInfo)
	plugins.Serve(plugins.ServeConfig{Driver: fake.New(log), Logger: log})
}
