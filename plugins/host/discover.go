package host

import (
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// BinaryPrefix starts the file name of every external plugin binary.
const BinaryPrefix = "rivet-driver-"

// Source is one plugin to run: where its binary is and how to start it.
type Source struct {
	// Driver is the driver name ("fake" for rivet-driver-fake).
	Driver string
	Command
	// BuiltIn is true for the rivet binary re-executed in plugin mode.
	BuiltIn bool
	// Checksum is the pinned sha256 of Path, or nil.
	Checksum []byte
}

// BuiltInCommands returns Config.BuiltIn for the drivers compiled into the
// rivet binary at exe: each is served by re-executing it as
// `rivet plugin serve <driver>`, so a conductor needs no other binary.
func BuiltInCommands(exe string, drivers ...string) map[string]Command {
	out := make(map[string]Command, len(drivers))
	for _, d := range drivers {
		out[d] = Command{Path: exe, Args: []string{"plugin", "serve", d}}
	}
	return out
}

// Discover lists the plugins to run: cfg.BuiltIn, with any executable
// rivet-driver-<name> in cfg.PluginDir taking precedence over the built-in
// of the same name. The result is sorted by driver name.
func Discover(cfg Config) ([]Source, error) {
	byName := map[string]Source{}
	for name, cmd := range cfg.BuiltIn {
		byName[name] = Source{Driver: name, Command: Command{Path: cmd.Path, Args: slices.Clone(cmd.Args), Env: slices.Clone(cmd.Env)}, BuiltIn: true}
	}
	if cfg.PluginDir != "" {
		entries, err := os.ReadDir(cfg.PluginDir)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("plugin host: read plugin dir: %w", err)
		}
		for _, e := range entries {
			name, ok := strings.CutPrefix(e.Name(), BinaryPrefix)
			if !ok || name == "" {
				continue
			}
			path := filepath.Join(cfg.PluginDir, e.Name())
			fi, err := os.Stat(path) // follows symlinks
			if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
				continue
			}
			byName[name] = Source{Driver: name, Command: Command{Path: path}}
		}
	}
	var errs []error
	for name, sum := range cfg.Checksums {
		src, ok := byName[name]
		if !ok {
			continue
		}
		b, err := hex.DecodeString(sum)
		if err != nil || len(b) != 32 {
			errs = append(errs, fmt.Errorf("plugin host: checksum for driver %s is not a hex sha256", name))
			continue
		}
		src.Checksum = b
		byName[name] = src
	}
	out := make([]Source, 0, len(byName))
	for _, name := range slices.Sorted(maps.Keys(byName)) {
		out = append(out, byName[name])
	}
	return out, errors.Join(errs...)
}
