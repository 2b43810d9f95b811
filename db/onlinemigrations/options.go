package onlinemigrations

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// ErrBadArguments is matched by every error about the command's arguments
// (exit code 127).
var ErrBadArguments = errors.New("bad arguments")

// ArgumentError is a bad argument; its message is Msg alone and it matches
// ErrBadArguments with errors.Is.
type ArgumentError struct{ Msg string }

// Error returns Msg.
func (e *ArgumentError) Error() string { return e.Msg }

// Is makes errors.Is(err, ErrBadArguments) true.
func (e *ArgumentError) Is(target error) bool { return target == ErrBadArguments }

func badArgument(format string, args ...any) error {
	return &ArgumentError{Msg: fmt.Sprintf(format, args...)}
}

// ParseOptions parses repeated --option values of the form
// <migration>.<key>=<value> into migration → key → value, as
// ironic-dbsync does. A value without "." or "=" is "Malformed option <x>";
// an unknown migration or key is refused naming the valid ones.
func ParseOptions(raw []string, r *Registry) (map[string]map[string]string, error) {
	out := map[string]map[string]string{}
	for _, opt := range raw {
		name, rest, ok1 := strings.Cut(opt, ".")
		key, val, ok2 := strings.Cut(rest, "=")
		if !ok1 || !ok2 || name == "" || key == "" {
			return nil, badArgument("Malformed option %s", opt)
		}
		m, ok := r.Lookup(name)
		if !ok {
			valid := "none are registered"
			if names := r.Names(); len(names) > 0 {
				valid = "valid migrations: " + strings.Join(names, ", ")
			}
			return nil, badArgument("option %s names unknown migration %q (%s)", opt, name, valid)
		}
		if !slices.Contains(m.Options, key) {
			valid := "it takes no options"
			if len(m.Options) > 0 {
				valid = "valid keys: " + strings.Join(m.Options, ", ")
			}
			return nil, badArgument("option %s: migration %s has no option %q (%s)", opt, name, key, valid)
		}
		if out[name] == nil {
			out[name] = map[string]string{}
		}
		out[name][key] = val
	}
	return out, nil
}
