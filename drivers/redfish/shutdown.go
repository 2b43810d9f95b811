package redfish

import (
	"context"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// LogoutOnSignal waits for SIGTERM, logs out of every BMC session
// d holds (for at most five seconds) and exits the process. A plugin's main
// runs it beside plugins.Serve, which offers no shutdown hook: a conductor
// stopped by systemd or Kubernetes signals its plugins, and their BMCs then
// get their sessions back at once instead of when they time out. SIGINT is
// left alone: go-plugin ignores it so that a Ctrl-C to the conductor's
// terminal lets the conductor stop its plugins in order.
func LogoutOnSignal(d *Driver) {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGTERM)
	<-ch
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	_ = d.Close(ctx)
	cancel()
	os.Exit(0)
}
