package config

import (
	"fmt"
	"io"
	"strings"
)

// ReferenceCommand regenerates docs/admin/configuration.md.
const ReferenceCommand = "go run ./cmd/rivet config sample --format markdown > docs/admin/configuration.md"

// Reference writes the Markdown configuration reference: the rules, then a
// table per section with every option's type, default, reloadability and
// help. Secret values are never written.
func Reference(w io.Writer) error {
	var b strings.Builder
	b.WriteString("# Configuration reference\n\n")
	fmt.Fprintf(&b, "<!-- Generated from the option declarations in core/config; do not edit.\n     Regenerate with: %s -->\n\n", ReferenceCommand)
	b.WriteString("Rivet reads oslo.config-style INI files given with `--config-file` " +
		"(repeatable; later files override earlier ones). Every option can also be set " +
		"with the environment variable `RIVET_<SECTION>_<OPTION>` (for example " +
		"`RIVET_DEFAULT_LOG_LEVEL` or `RIVET_JSON_RPC_PORT`), which overrides the files; " +
		"other `RIVET_` variables are ignored. An unknown section or option in a file, or " +
		"an invalid value anywhere, stops a service at start with a message naming the " +
		"option and what is valid; `rivet config check --config-file FILE` runs the same " +
		"checks.\n\n")
	b.WriteString("Options marked *yes* under Reload are applied on SIGHUP; a change to any " +
		"other option is logged as needing a restart. Durations are seconds (fractions " +
		"allowed) or Go durations such as `90s`. A commented sample of every option is " +
		"in [`configs/rivet.conf.sample`](../../configs/rivet.conf.sample).\n")
	for _, s := range declared.sections {
		fmt.Fprintf(&b, "\n## [%s]\n\n%s\n\n", s.name, s.help)
		b.WriteString("| Option | Type | Default | Reload | Description |\n")
		b.WriteString("|---|---|---|---|---|\n")
		for _, o := range s.options {
			fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s |\n",
				o.Name, referenceType(o), referenceDefault(o), yesNo(o.Reloadable), cell(referenceDescription(o)))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func referenceDescription(o *Option) string {
	parts := []string{o.Help}
	if len(o.Choices) > 0 {
		vals := make([]string, len(o.Choices))
		for i, c := range o.Choices {
			vals[i] = "`" + choiceValue(c.Value) + "`"
			if c.Doc != "" {
				vals[i] += " (" + c.Doc + ")"
			}
		}
		parts = append(parts, "Values: "+strings.Join(vals, ", ")+".")
	}
	switch lo, hi := o.Bounds(); {
	case lo != "" && hi != "":
		parts = append(parts, "Range: "+lo+" to "+hi+".")
	case lo != "":
		parts = append(parts, "Minimum: "+lo+".")
	case hi != "":
		parts = append(parts, "Maximum: "+hi+".")
	}
	if o.Secret {
		parts = append(parts, "Secret: never logged or shown.")
	}
	parts = append(parts, "Environment: `"+o.EnvVar()+"`.")
	return strings.Join(parts, " ")
}

func referenceType(o *Option) string {
	if o.Kind == Duration {
		return "duration (s)"
	}
	return o.Kind.String()
}

func referenceDefault(o *Option) string {
	d := sampleDefault(o)
	if d == "" {
		return "*empty*"
	}
	return "`" + d + "`"
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// cell escapes text for a Markdown table cell.
func cell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
