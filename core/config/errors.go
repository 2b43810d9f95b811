package config

import "strings"

// Error is one configuration problem. Its text never holds a secret value.
type Error struct {
	// Source is where the value came from: "config file /etc/rivet/rivet.conf",
	// "environment variable RIVET_API_PORT", or empty once values are merged.
	Source string
	// Section and Option locate the problem; Option is empty for a problem
	// with a whole section, both are empty for a problem with a whole file.
	Section, Option string
	// Problem says what is wrong and what would be valid.
	Problem string
}

// Error renders "<source>: [section] option: problem", leaving out what is empty.
func (e *Error) Error() string {
	var b strings.Builder
	if e.Source != "" {
		b.WriteString(e.Source + ": ")
	}
	if e.Section != "" {
		b.WriteString("[" + e.Section + "]")
		if e.Option != "" {
			b.WriteString(" " + e.Option)
		}
		b.WriteString(": ")
	}
	b.WriteString(e.Problem)
	return b.String()
}

// Problems flattens an error from Load or Validate, which may join several,
// into one error per problem.
func Problems(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, Problems(e)...)
		}
		return out
	}
	return []error{err}
}

// optionError builds an Error about option o.
func optionError(source string, o *Option, problem string) *Error {
	return &Error{Source: source, Section: o.Section, Option: o.Name, Problem: problem}
}
