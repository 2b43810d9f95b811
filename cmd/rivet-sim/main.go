// Command rivet-sim is a Redfish BMC simulator: one HTTP(S) port serving many
// computer systems with power, boot override, virtual media, inventory,
// sessions and NMI, plus latency and fault injection for tests and
// benchmarks. The simulator itself is package drivers/redfish/sim; this main
// only turns flags into sim.Options.
//
//	rivet-sim --systems 10 --power-settle 2s
//	RIVET_SIM_PASSWORD=secret rivet-sim --listen 127.0.0.1:8443 --tls-self-signed
//	rivet-sim --control-listen 127.0.0.1:8001   # then: curl -X PUT -d '{"hang":true}' 127.0.0.1:8001/faults/node-0
package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/rivetmetal/rivet/drivers/redfish/sim"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args, os.Stdout, os.Stderr))
}

// run executes the CLI; every error becomes one line on stderr and exit 1.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	app := &cli.App{
		Name:            "rivet-sim",
		Usage:           "a Redfish BMC simulator serving many systems on one port",
		Writer:          stdout,
		ErrWriter:       stderr,
		HideVersion:     true,
		HideHelpCommand: true,
		ExitErrHandler:  func(*cli.Context, error) {}, // run prints errors once
		Flags:           flags(),
		Action:          func(c *cli.Context) error { return serve(c, stdout, stderr) },
	}
	if err := app.RunContext(ctx, args); err != nil {
		fmt.Fprintln(stderr, "rivet-sim: "+err.Error())
		return 1
	}
	return 0
}

func flags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "listen", Value: "127.0.0.1:8000", Usage: "address to listen on (loopback by default: the simulator has one well-known password)"},
		&cli.IntFlag{Name: "systems", Value: 4, Usage: "number of systems (node-0 … node-N-1)"},
		&cli.StringFlag{Name: "username", Value: sim.DefaultUsername, Usage: "account user name"},
		&cli.StringFlag{Name: "password", Value: sim.DefaultPassword, DefaultText: sim.DefaultPassword,
			EnvVars: []string{"RIVET_SIM_PASSWORD"}, Usage: "account password; prefer the environment variable, which ps does not show"},
		&cli.DurationFlag{Name: "latency", Usage: "delay added to every answer"},
		&cli.Float64Flag{Name: "error-rate", Usage: "fraction of requests answered with 500 (0..1)"},
		&cli.Float64Flag{Name: "hang-rate", Usage: "fraction of requests never answered (0..1)"},
		&cli.IntFlag{Name: "session-limit", Usage: "maximum live sessions, 0 for no limit (beyond it: 503 SessionLimitExceeded)"},
		&cli.DurationFlag{Name: "session-timeout", Value: sim.DefaultSessionTimeout, Usage: "idle time after which a session expires"},
		&cli.DurationFlag{Name: "power-settle", Usage: "time a power change spends in PoweringOn/PoweringOff"},
		&cli.DurationFlag{Name: "update-duration", Value: sim.DefaultUpdateLength, Usage: "time a firmware update (UpdateService.SimpleUpdate) runs before its Task completes"},
		&cli.BoolFlag{Name: "system-virtual-media", Usage: "also serve virtual media under /redfish/v1/Systems/{id}, as newer BMCs do"},
		&cli.StringFlag{Name: "quirks", Usage: "comma-separated habits of real BMC families: " +
			"no-sessions (no SessionService, HTTP Basic only), power-delay=2s (a reset applies that much later, the old state reads meanwhile), " +
			"boot-continuous (a Once boot override becomes Continuous), no-media-actions (virtual media changed by PATCH only), " +
			"missing=Memory|Processors|Storage|SimpleStorage|EthernetInterfaces (a linked collection answers 404), " +
			"session-limit-409 (logins beyond --session-limit get 409, not 503)"},
		&cli.Uint64Flag{Name: "seed", Usage: "seed for hardware identities (UUIDs, MACs, sizes) and fault draws"},
		&cli.StringFlag{Name: "tls-cert", Usage: "PEM certificate file: serve https"},
		&cli.StringFlag{Name: "tls-key", Usage: "PEM private key file for --tls-cert"},
		&cli.BoolFlag{Name: "tls-self-signed", Usage: "serve https with a certificate generated in memory"},
		&cli.BoolFlag{Name: "debug", Usage: "log every request (method, path, status) to stderr"},
		&cli.StringFlag{Name: "control-listen", Usage: "loopback address of a control endpoint for tests: " +
			"PUT /faults/node-N {\"hang\":true | \"status_500\":true | \"latency\":\"2s\"} sets a system's fault at run time, " +
			"DELETE /faults/node-N clears it, GET /faults/node-N shows it and the system's request count"},
	}
}

// serve builds the simulator, prints where it is and what it serves, and
// runs until SIGINT/SIGTERM.
func serve(c *cli.Context, stdout, stderr io.Writer) error {
	if c.NArg() > 0 {
		return fmt.Errorf("unexpected arguments: %s", strings.Join(c.Args().Slice(), " "))
	}
	level := slog.LevelInfo
	if c.Bool("debug") {
		level = slog.LevelDebug
	}
	quirks, err := sim.ParseQuirks(c.String("quirks"))
	if err != nil {
		return fmt.Errorf("--quirks: %w", err)
	}
	s, err := sim.New(sim.Options{
		Quirks:             quirks,
		Systems:            c.Int("systems"),
		Username:           c.String("username"),
		Password:           c.String("password"),
		Latency:            c.Duration("latency"),
		ErrorRate:          c.Float64("error-rate"),
		HangRate:           c.Float64("hang-rate"),
		SessionLimit:       c.Int("session-limit"),
		SessionTimeout:     c.Duration("session-timeout"),
		PowerSettle:        c.Duration("power-settle"),
		UpdateDuration:     c.Duration("update-duration"),
		SystemVirtualMedia: c.Bool("system-virtual-media"),
		Seed:               c.Uint64("seed"),
		Logger:             slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level})),
	})
	if err != nil {
		return err
	}
	defer s.Close()
	tlsConfig, fingerprint, err := tlsFromFlags(c.String("tls-cert"), c.String("tls-key"), c.Bool("tls-self-signed"), c.String("listen"))
	if err != nil {
		return err
	}
	l, err := net.Listen("tcp", c.String("listen"))
	if err != nil {
		return err
	}
	scheme := "http"
	if tlsConfig != nil {
		scheme = "https"
		l = tls.NewListener(l, tlsConfig)
	}
	fmt.Fprintf(stdout, "rivet-sim: Redfish service at %s://%s/redfish/v1/ (user %q)\n", scheme, l.Addr(), c.String("username"))
	if fingerprint != "" {
		fmt.Fprintf(stdout, "rivet-sim: self-signed certificate SHA-256 %s\n", fingerprint)
	}
	fmt.Fprintf(stdout, "rivet-sim: systems %s\n", describeIDs(s.SystemIDs()))
	if addr := c.String("control-listen"); addr != "" {
		bound, err := serveControl(c.Context, addr, s)
		if err != nil {
			_ = l.Close()
			return err
		}
		fmt.Fprintf(stdout, "rivet-sim: control endpoint at http://%s/faults/\n", bound)
	}
	err = s.Serve(c.Context, l)
	if err == nil || errors.Is(err, context.Canceled) {
		fmt.Fprintln(stdout, "rivet-sim: stopped")
		return nil
	}
	return err
}

// describeIDs lists a few ids, and the range when there are many.
func describeIDs(ids []string) string {
	if len(ids) <= 8 {
		return strings.Join(ids, " ")
	}
	return strings.Join(ids[:4], " ") + " … " + ids[len(ids)-1] + fmt.Sprintf(" (%d in all)", len(ids))
}
