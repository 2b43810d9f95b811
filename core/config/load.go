package config

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"

	"github.com/rivetmetal/rivet/core/release"
	"gopkg.in/ini.v1"
)

// Source says where a configuration is read from.
type Source struct {
	// Files are INI files applied in order, later ones overriding earlier.
	Files []string
	// Environ is the environment ("KEY=value" items, as os.Environ returns);
	// RIVET_<SECTION>_<OPTION> variables override the files.
	Environ []string
	// Releases is the table pin_release_version is checked against; nil
	// means release.Default().
	Releases *release.Table
}

// Load reads files in order, then the RIVET_<SECTION>_<OPTION> variables of
// environ, over the defaults, and validates the result. The error, if any,
// joins one *Error per problem; see Problems.
func Load(files, environ []string) (*Config, error) {
	return Source{Files: files, Environ: environ}.Load()
}

// Load reads and validates the configuration s describes.
func (s Source) Load() (*Config, error) {
	c := Default()
	var errs []error
	for _, f := range s.Files {
		errs = append(errs, applyFile(c, f)...)
	}
	errs = append(errs, applyEnv(c, s.Environ)...)
	t := s.Releases
	if t == nil {
		t = release.Default()
	}
	if err := c.ValidateFor(t); err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return c, nil
}

// iniOptions read files as oslo.config does: no inline comments, no
// backslash continuations, values taken verbatim (no %(var)s expansion).
var iniOptions = ini.LoadOptions{IgnoreInlineComment: true, IgnoreContinuation: true}

func applyFile(c *Config, path string) []error {
	src := "config file " + path
	data, err := os.ReadFile(path)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return []error{&Error{Source: src, Problem: "cannot read: " + err.Error()}}
	}
	f, err := ini.LoadSources(iniOptions, data)
	if err != nil {
		return []error{&Error{Source: src, Problem: parseProblem(data, err)}}
	}
	var errs []error
	for _, sec := range f.Sections() {
		opts, known := declared.byName[sec.Name()]
		if !known {
			errs = append(errs, &Error{Source: src, Section: sec.Name(), Problem: "unknown section" + suggest(sec.Name(), Sections())})
			continue
		}
		for _, k := range sec.Keys() {
			o, ok := opts[k.Name()]
			if !ok {
				errs = append(errs, &Error{Source: src, Section: sec.Name(), Option: k.Name(),
					Problem: "unknown option" + unknownHint(sec.Name(), k.Name())})
				continue
			}
			if p := inlineComment(o, k.Value()); p != "" {
				errs = append(errs, &Error{Source: src + keyLine(data, sec.Name(), k.Name()), Section: sec.Name(), Option: k.Name(), Problem: p})
				continue
			}
			if err := assign(c, o, src, k.Value()); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errs
}

// inlineComment says why raw, read from a file for o, holds what looks like
// an inline comment ("value   # note"), or "". oslo.config, and Rivet as
// it, take everything after "=" as the value, so such a value would be used
// with the comment in it. Secret values are not checked: a password may hold
// " #".
func inlineComment(o *Option, raw string) string {
	if o.Secret {
		return ""
	}
	i := strings.IndexFunc(raw, func(r rune) bool { return r == '#' || r == ';' })
	for i > 0 {
		if raw[i-1] == ' ' || raw[i-1] == '\t' {
			return fmt.Sprintf("the value %s holds an inline comment: a value runs to the end of its line, comments included "+
				"(as in oslo.config); move the comment to a line of its own starting with #", o.displayRaw(raw))
		}
		j := strings.IndexFunc(raw[i+1:], func(r rune) bool { return r == '#' || r == ';' })
		if j < 0 {
			break
		}
		i += j + 1
	}
	return ""
}

// keyLine returns ", line N" for the line of data that sets option name in
// section, or "" when it cannot be found.
func keyLine(data []byte, section, name string) string {
	cur := "DEFAULT"
	for n, line := range strings.Split(string(data), "\n") {
		l := strings.TrimSpace(line)
		if strings.HasPrefix(l, "[") && strings.HasSuffix(l, "]") {
			cur = strings.TrimSpace(l[1 : len(l)-1])
			continue
		}
		if key, _, ok := strings.Cut(l, "="); ok && cur == section && strings.TrimSpace(key) == name {
			return fmt.Sprintf(", line %d", n+1)
		}
	}
	return ""
}

// parseProblem describes an INI syntax error by line number, without
// echoing the line, which may hold a secret.
func parseProblem(data []byte, err error) string {
	var nd ini.ErrDelimiterNotFound
	msg := err.Error()
	var line, what string
	switch {
	case errors.As(err, &nd):
		line, what = nd.Line, "is not a [section] header, a comment or option = value"
	case strings.HasPrefix(msg, "unclosed section: "):
		line, what = strings.TrimPrefix(msg, "unclosed section: "), "is a [section] header without its closing ]"
	case strings.HasPrefix(msg, "missing closing key quote: "):
		line, what = strings.TrimPrefix(msg, "missing closing key quote: "), "has an option name without its closing quote"
	default:
		return "is not a valid INI file"
	}
	if i := bytes.Index(data, []byte(line)); i >= 0 && line != "" {
		return fmt.Sprintf("line %d %s", bytes.Count(data[:i], []byte("\n"))+1, what)
	}
	return "a line " + what
}

func applyEnv(c *Config, environ []string) []error {
	var errs []error
	for _, kv := range environ {
		name, value, ok := strings.Cut(kv, "=")
		o := declared.byEnvVar[name]
		if !ok || o == nil {
			continue // not ours: RIVET_URL, RIVET_TEST_*, …
		}
		if err := assign(c, o, "environment variable "+name, value); err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

// assign parses raw and stores it in c, or says why it cannot.
func assign(c *Config, o *Option, src, raw string) error {
	v, err := parse(o.Kind, raw)
	if err != nil {
		return optionError(src, o, o.displayRaw(raw)+" "+err.Error())
	}
	o.set(c, v)
	return nil
}

// unknownHint suggests the option meant: a close name in section, else the
// sections that declare name.
func unknownHint(section, name string) string {
	if s := suggest(name, optionNames(section)); s != "" {
		return s
	}
	return elsewhere(section, name)
}

func optionNames(section string) []string {
	var names []string
	for name := range declared.byName[section] {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}
