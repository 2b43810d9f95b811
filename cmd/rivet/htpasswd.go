package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/rivetmetal/rivet/core/htpasswd"
	"github.com/urfave/cli/v2"
	"golang.org/x/crypto/bcrypt"
	"golang.org/x/term"
)

// htpasswdCommand is `rivet htpasswd FILE USER`: Apache's `htpasswd -B`
// for hosts without Apache's tools. It adds USER to FILE, or replaces its
// password, as a bcrypt hash; the file is created mode 0600.
func htpasswdCommand() *cli.Command {
	return &cli.Command{
		Name:      "htpasswd",
		Usage:     "add a user to an htpasswd file for http_basic, or change its password (bcrypt, as htpasswd -B)",
		ArgsUsage: "FILE USER",
		Description: "The password is prompted for without echo on a terminal, else read from the first line of " +
			"standard input (printf '%s\\n' \"$PASSWORD\" | rivet htpasswd FILE USER). Other users' lines are kept; " +
			"a new file is created with mode 0600. Running services re-read the file on SIGHUP.",
		Flags: []cli.Flag{&cli.IntFlag{Name: "cost", Value: bcrypt.DefaultCost, Usage: "bcrypt `COST` (4-31)"}},
		Action: func(c *cli.Context) error {
			if c.NArg() != 2 {
				return cli.Exit("htpasswd: give FILE and USER (see rivet htpasswd --help)", 2)
			}
			path, user := c.Args().Get(0), c.Args().Get(1)
			if user == "" || strings.ContainsAny(user, ":\n\r") {
				return cli.Exit(fmt.Sprintf("htpasswd: user %q must be non-empty and hold no \":\" or line break", user), 2)
			}
			password, err := readNewPassword(c, user)
			if err != nil {
				return cli.Exit("htpasswd: "+err.Error(), 2)
			}
			hash, err := bcrypt.GenerateFromPassword([]byte(password), c.Int("cost"))
			if err != nil {
				return cli.Exit("htpasswd: "+err.Error(), 2)
			}
			if err := setHtpasswdUser(path, user, string(hash)); err != nil {
				return cli.Exit("htpasswd: "+err.Error(), 1)
			}
			fmt.Fprintf(c.App.Writer, "%s: user %s set\n", path, user)
			return nil
		},
	}
}

// readNewPassword prompts twice on a terminal, else reads stdin's first line.
func readNewPassword(c *cli.Context, user string) (string, error) {
	fd := int(os.Stdin.Fd())
	if !term.IsTerminal(fd) {
		// Byte by byte, so that the next command of a script reading the
		// same standard input gets the next line.
		var line []byte
		b := make([]byte, 1)
		for {
			n, err := os.Stdin.Read(b)
			if n == 1 && b[0] != '\n' {
				line = append(line, b[0])
				continue
			}
			if n == 1 || err != nil {
				break
			}
		}
		pw := strings.TrimRight(string(line), "\r")
		if pw == "" {
			return "", errors.New("no password on standard input (an empty line or none)")
		}
		return pw, nil
	}
	var pw [2]string
	for i, prompt := range []string{"New password for %s: ", "Again: "} {
		fmt.Fprintf(c.App.ErrWriter, prompt, user)
		b, err := term.ReadPassword(fd)
		fmt.Fprintln(c.App.ErrWriter)
		if err != nil {
			return "", fmt.Errorf("read password: %v", err)
		}
		pw[i] = string(b)
	}
	if pw[0] != pw[1] {
		return "", errors.New("the passwords differ")
	}
	if pw[0] == "" {
		return "", errors.New("the password is empty")
	}
	return pw[0], nil
}

// setHtpasswdUser writes path with user's line set to hash, keeping the
// other lines, and checks the result parses as Rivet reads it.
func setHtpasswdUser(path, user, hash string) error {
	data, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	var lines []string
	replaced := false
	for _, l := range strings.Split(strings.TrimRight(string(data), "\n"), "\n") {
		if name, _, ok := strings.Cut(l, ":"); ok && name == user && !strings.HasPrefix(strings.TrimSpace(l), "#") {
			l, replaced = user+":"+hash, true
		}
		if l != "" || len(lines) > 0 {
			lines = append(lines, l)
		}
	}
	if !replaced {
		lines = append(lines, user+":"+hash)
	}
	out := []byte(strings.Join(lines, "\n") + "\n")
	if _, err := htpasswd.Parse(out); err != nil {
		return fmt.Errorf("%s: %v", path, err)
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, out, 0o600); err != nil {
		return err
	}
	if st, err := os.Stat(path); err == nil {
		_ = os.Chmod(tmp, st.Mode().Perm())
	}
	return os.Rename(tmp, path)
}
