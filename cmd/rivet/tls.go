package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/rivetmetal/rivet/core/pki"
	"github.com/urfave/cli/v2"
)

const (
	caCertName = "ca.pem"
	caKeyName  = "ca-key.pem"
	day        = 24 * time.Hour
)

func tlsCommand() *cli.Command {
	dirFlag := &cli.StringFlag{Name: "dir", Value: "/etc/rivet/tls", Usage: "`DIR` holding the CA (" + caCertName + ", " + caKeyName + ")"}
	return &cli.Command{
		Name:  "tls",
		Usage: "make a deployment CA and certificates for JSON-RPC mutual TLS",
		Description: "rivet tls init makes the deployment's own CA; rivet tls issue signs a certificate per host, " +
			"valid for both the conductor's server and the API's client side. Copy ca.pem to every host, each " +
			"host's certificate and key to that host only, and keep ca-key.pem off the service hosts.",
		Subcommands: []*cli.Command{
			{
				Name:  "init",
				Usage: "create a CA in --dir (refuses to overwrite one)",
				Flags: []cli.Flag{dirFlag, &cli.IntFlag{Name: "days", Value: 3650, Usage: "validity in `DAYS`"},
					&cli.StringFlag{Name: "name", Value: "Rivet JSON-RPC CA", Usage: "the CA's common `NAME`"}},
				Action: tlsInit,
			},
			{
				Name:      "issue",
				Usage:     "sign a certificate for a host: its [DEFAULT] host name first, then other names or addresses",
				ArgsUsage: "HOST [NAME|ADDRESS ...]",
				Flags:     []cli.Flag{dirFlag, &cli.IntFlag{Name: "days", Value: 825, Usage: "validity in `DAYS`"}},
				Action:    tlsIssue,
			},
		},
	}
}

func tlsInit(c *cli.Context) error {
	dir, days := c.String("dir"), c.Int("days")
	if days < 1 {
		return cli.Exit("tls init: --days must be at least 1", 2)
	}
	certPEM, keyPEM, err := pki.NewCA(c.String("name"), time.Duration(days)*day, time.Now())
	if err != nil {
		return cli.Exit("tls init: "+err.Error(), 1)
	}
	if err := writeNew(dir, map[string][]byte{caCertName: certPEM, caKeyName: keyPEM}); err != nil {
		return cli.Exit("tls init: "+err.Error(), 1)
	}
	_, err = fmt.Fprintf(c.App.Writer, "CA written: %s (copy to every host: [json_rpc] cafile), %s (keep it off the service hosts)\n",
		filepath.Join(dir, caCertName), filepath.Join(dir, caKeyName))
	return err
}

func tlsIssue(c *cli.Context) error {
	dir, days := c.String("dir"), c.Int("days")
	hosts := c.Args().Slice()
	if len(hosts) == 0 {
		return cli.Exit("tls issue: give the host's [DEFAULT] host name (the name the APIs dial), then any other names or addresses", 2)
	}
	if days < 1 {
		return cli.Exit("tls issue: --days must be at least 1", 2)
	}
	if strings.ContainsAny(hosts[0], `/\`) || hosts[0] == "." || hosts[0] == ".." {
		return cli.Exit(fmt.Sprintf("tls issue: %q is not a host name", hosts[0]), 2)
	}
	caCert, err := os.ReadFile(filepath.Join(dir, caCertName))
	if err != nil {
		return cli.Exit("tls issue: "+err.Error()+" (run rivet tls init first)", 1)
	}
	caKey, err := os.ReadFile(filepath.Join(dir, caKeyName))
	if err != nil {
		return cli.Exit("tls issue: "+err.Error(), 1)
	}
	certPEM, keyPEM, err := pki.Issue(caCert, caKey, hosts, time.Duration(days)*day, time.Now())
	if err != nil {
		return cli.Exit("tls issue: "+err.Error(), 1)
	}
	certName, keyName := hosts[0]+".pem", hosts[0]+"-key.pem"
	if err := writeNew(dir, map[string][]byte{certName: certPEM, keyName: keyPEM}); err != nil {
		return cli.Exit("tls issue: "+err.Error(), 1)
	}
	_, err = fmt.Fprintf(c.App.Writer, `certificate for %s written; on that host:
[json_rpc]
use_ssl = true
cert_file = %s
key_file = %s
cafile = %s
# on conductors, once every API presents a certificate
require_client_certificate = true
`, strings.Join(hosts, ", "), filepath.Join(dir, certName), filepath.Join(dir, keyName), filepath.Join(dir, caCertName))
	return err
}

// writeNew writes files into dir (created 0755 if needed): keys 0600,
// certificates 0644; it refuses to replace any existing file, and writes
// none when one exists.
func writeNew(dir string, files map[string][]byte) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for name := range files {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			return fmt.Errorf("%s exists: refusing to replace it", filepath.Join(dir, name))
		} else if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	for name, data := range files {
		mode := os.FileMode(0o644)
		if strings.HasSuffix(name, "-key.pem") {
			mode = 0o600
		}
		f, err := os.OpenFile(filepath.Join(dir, name), os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
		if err != nil {
			return err
		}
		_, werr := f.Write(data)
		if cerr := f.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			return werr
		}
	}
	return nil
}
