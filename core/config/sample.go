package config

import (
	"fmt"
	"io"
	"strings"
)

// SampleCommand regenerates configs/rivet.conf.sample.
const SampleCommand = "go run ./cmd/rivet config sample > configs/rivet.conf.sample"

// sampleWidth is where sample comments wrap.
const sampleWidth = 78

// Sample writes an oslo-style sample file: every section and option, each
// option commented out with its default, after its help, type, valid values
// and whether SIGHUP applies it. Secret values are never written.
func Sample(w io.Writer) error {
	var b strings.Builder
	b.WriteString("# Rivet configuration sample, generated from the option declarations in\n" +
		"# core/config; do not edit. Regenerate with:\n#   " + SampleCommand + "\n#\n")
	comment(&b, "Every option is shown commented out with its default. Files given with "+
		"--config-file are applied in order, later ones overriding earlier ones; the "+
		"environment variable RIVET_<SECTION>_<OPTION> (for example RIVET_DEFAULT_LOG_LEVEL) "+
		"overrides the files. Durations are seconds (fractions allowed) or Go durations "+
		"such as 90s. Options marked reloadable take effect on SIGHUP; a change to any "+
		"other option needs a restart.")
	for _, s := range declared.sections {
		fmt.Fprintf(&b, "\n[%s]\n\n#\n", s.name)
		comment(&b, s.help)
		b.WriteString("#\n")
		for _, o := range s.options {
			b.WriteString("\n")
			sampleOption(&b, o)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func sampleOption(b *strings.Builder, o *Option) {
	comment(b, o.Help+" ("+typeLabel(o)+")")
	if len(o.Choices) > 0 {
		b.WriteString("# Possible values:\n")
		for _, c := range o.Choices {
			line := choiceValue(c.Value)
			if c.Doc != "" {
				line += " - " + c.Doc
			}
			commentIndent(b, line, "    ")
		}
	}
	lo, hi := o.Bounds()
	if lo != "" {
		b.WriteString("# Minimum value: " + lo + "\n")
	}
	if hi != "" {
		b.WriteString("# Maximum value: " + hi + "\n")
	}
	if o.Reloadable {
		b.WriteString("# Note: this option is reloadable: SIGHUP applies it without a restart.\n")
	}
	if o.Secret {
		b.WriteString("# Note: this value is secret and is never logged or shown.\n")
	}
	b.WriteString("# Environment variable: " + o.EnvVar() + "\n")
	fmt.Fprintf(b, "#%s\n", strings.TrimRight(o.Name+" = "+sampleDefault(o), " "))
}

// sampleDefault is the default as a file would hold it, masked if secret.
func sampleDefault(o *Option) string {
	d := o.DefaultString()
	if o.Secret && d != "" {
		return mask
	}
	return d
}

// typeLabel describes the value type in oslo's words.
func typeLabel(o *Option) string {
	switch o.Kind {
	case Bool:
		return "boolean value"
	case Int:
		return "integer value"
	case Duration:
		return "duration value in seconds"
	case List:
		return "list value, comma-separated"
	}
	return "string value"
}

func choiceValue(v string) string {
	if v == "" {
		return `""`
	}
	return v
}

// comment writes text as "# " lines wrapped at sampleWidth.
func comment(b *strings.Builder, text string) { commentIndent(b, text, "") }

// commentIndent is comment with continuation lines indented by indent. Words
// longer than a line are not broken.
func commentIndent(b *strings.Builder, text, indent string) {
	line := "#"
	for _, word := range strings.Fields(text) {
		if len(line)+1+len(word) > sampleWidth && line != "#" {
			b.WriteString(line + "\n")
			line = "#" + indent
		}
		line += " " + word
	}
	b.WriteString(line + "\n")
}
