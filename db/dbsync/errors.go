package dbsync

import (
	"errors"
	"fmt"
	"strings"

	"github.com/rivetmetal/rivet/db/migrations"
	"github.com/rivetmetal/rivet/db/onlinemigrations"
)

// Exit codes of rivet dbsync, as ironic-dbsync's.
const (
	ExitOK           = 0
	ExitIncomplete   = 1 // online migrations not finished, or any failure
	ExitRefused      = 2 // incompatible database, lock held, too-old services
	ExitBadArguments = 127
)

// ErrIncomplete says online data migrations stopped at the budget and must
// be re-run. Its message is printed on stdout by the command already.
var ErrIncomplete = errors.New("Data migrations have not completed. Please re-run.")

// ErrBadArguments is wrapped by every argument error (exit 127).
var ErrBadArguments = onlinemigrations.ErrBadArguments

// ErrRefused is wrapped by every refusal (exit 2).
var ErrRefused = onlinemigrations.ErrRefused

// ExitCode returns the process exit code for an error of this package.
func ExitCode(err error) int {
	var locked *migrations.LockedError
	switch {
	case err == nil:
		return ExitOK
	case errors.Is(err, ErrBadArguments):
		return ExitBadArguments
	case errors.Is(err, ErrRefused), errors.As(err, &locked):
		return ExitRefused
	}
	return ExitIncomplete
}

// refusal builds an error wrapping ErrRefused whose message is msg alone.
func refusal(format string, args ...any) error {
	return &refusedError{msg: fmt.Sprintf(format, args...)}
}

type refusedError struct{ msg string }

func (e *refusedError) Error() string        { return e.msg }
func (e *refusedError) Is(target error) bool { return target == ErrRefused }

// TableProblem is one object table whose rows this release cannot read.
type TableProblem struct {
	Table string
	Kind  string
	// Missing is set when the table does not exist.
	Missing bool
	// Rows counts offending rows per version; NULL versions count under
	// "NULL".
	Rows map[string]int
	// Supported lists the versions this release reads, oldest first.
	Supported []string
}

// String describes the problem for the refusal message.
func (p TableProblem) String() string {
	if p.Missing {
		return "table " + p.Table + " does not exist"
	}
	parts := make([]string, 0, len(p.Rows))
	for _, v := range sortedKeys(p.Rows) {
		n := p.Rows[v]
		noun := "rows"
		if n == 1 {
			noun = "row"
		}
		parts = append(parts, fmt.Sprintf("%d %s at version %s", n, noun, v))
	}
	return fmt.Sprintf("table %s has %s (%s versions supported: %s)",
		p.Table, strings.Join(parts, " and "), p.Kind, strings.Join(p.Supported, ", "))
}

// IncompatibleError says the database holds rows this release cannot read
// (ironic-dbsync's check_obj_versions failure).
type IncompatibleError struct {
	// Release is this code's release string.
	Release  string
	Problems []TableProblem
}

// Error gives ironic-dbsync's message, naming each table, its offending
// versions with row counts, and the supported versions.
func (e *IncompatibleError) Error() string {
	probs := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		probs[i] = p.String()
	}
	return fmt.Sprintf("The database is not compatible with this release of Rivet (%s): %s. "+
		"Please run \"rivet dbsync online-data-migrations\" using the previous release.",
		e.Release, strings.Join(probs, "; "))
}

// Is makes errors.Is(err, ErrRefused) true.
func (e *IncompatibleError) Is(target error) bool { return target == ErrRefused }
