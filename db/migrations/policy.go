package migrations

import (
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"strings"
)

// Rule is one clause of the DB change policy (seeds/000 "Policy for changes
// to the DB model"): while old and new releases share a database, the schema
// may only grow.
type Rule string

// The policy's rules.
const (
	// RuleDrop: DROP TABLE or DROP COLUMN. An old release still reads and
	// writes what is dropped; drops wait for the deprecation period plus
	// one release and need a recorded exception.
	RuleDrop Rule = "drop"
	// RuleRename: renaming a table or column breaks every older release at
	// once. Add the new one, migrate the data online, drop the old later.
	RuleRename Rule = "rename"
	// RuleAlterType: changing or resizing a column's type (ALTER COLUMN …
	// TYPE, MySQL MODIFY or CHANGE). Add a new column instead.
	RuleAlterType Rule = "alter-type"
	// RuleNotNull: ADD COLUMN … NOT NULL without DEFAULT, or SET NOT NULL;
	// old releases do not write the column, so their inserts would fail.
	RuleNotNull Rule = "not-null"
)

// DropException records a drop the policy permits: the migration's file
// must also carry "-- rivet:allow-drop deprecated-in=<DeprecatedIn>
// reason=<why>".
type DropException struct {
	// Migration is the file name up to the first dot, e.g.
	// "20270301000000_drop_nodes_old_column".
	Migration string
	// DeprecatedIn is the release that deprecated what is dropped.
	DeprecatedIn string
	// Reason says why the drop is safe now.
	Reason string
}

// AllowedDrops lists the recorded drop exceptions. Adding one needs the
// deprecation release and a reviewer's agreement that every release still
// supported against this schema no longer uses what is dropped.
var AllowedDrops = []DropException{}

// Violation is one breach of the policy in a migration file.
type Violation struct {
	File      string
	Line      int
	Rule      Rule
	Why       string
	Statement string
}

// String renders file:line: rule: why: statement.
func (v Violation) String() string {
	return fmt.Sprintf("%s:%d: %s: %s: %s", v.File, v.Line, v.Rule, v.Why, v.Statement)
}

var directiveRE = regexp.MustCompile(`(?m)^\s*--\s*rivet:allow-drop\s+deprecated-in=(\S+)\s+reason=(\S.*)$`)

// CheckPolicy checks the SQL text of one migration file against the policy,
// honouring drop exceptions listed in allow.
func CheckPolicy(file, sqlText string, allow []DropException) []Violation {
	name, _, _ := strings.Cut(path.Base(file), ".")
	dropOK, dropWhy := dropPermission(name, sqlText, allow)
	var out []Violation
	for _, st := range statements(sqlText) {
		for _, f := range checkStatement(st.code) {
			if f.rule == RuleDrop && dropOK {
				continue
			}
			if f.rule == RuleDrop && dropWhy != "" {
				f.why += "; " + dropWhy
			}
			out = append(out, Violation{File: file, Line: st.line, Rule: f.rule, Why: f.why, Statement: st.text})
		}
	}
	return out
}

// dropPermission reports whether file name may drop, and if not, what is
// missing from a half-recorded exception.
func dropPermission(name, sqlText string, allow []DropException) (bool, string) {
	m := directiveRE.FindStringSubmatch(sqlText)
	listed := slices.IndexFunc(allow, func(e DropException) bool { return e.Migration == name })
	switch {
	case m == nil && listed < 0:
		return false, ""
	case m == nil:
		return false, "AllowedDrops lists " + name + " but the file has no rivet:allow-drop comment"
	case listed < 0:
		return false, "the rivet:allow-drop comment has no matching entry in AllowedDrops"
	case allow[listed].DeprecatedIn != m[1]:
		return false, fmt.Sprintf("deprecated-in=%s in the file but %s in AllowedDrops", m[1], allow[listed].DeprecatedIn)
	}
	return true, ""
}

// CheckFiles checks every *.sql file of fsys.
func CheckFiles(fsys fs.FS, allow []DropException) ([]Violation, error) {
	var out []Violation
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".sql") {
			return err
		}
		b, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		out = append(out, CheckPolicy(p, string(b), allow)...)
		return nil
	})
	return out, err
}

type finding struct {
	rule Rule
	why  string
}

var (
	dropObjectRE = regexp.MustCompile(`\bDROP\s+(TABLE|DATABASE|SCHEMA)\b`)
	dropClauseRE = regexp.MustCompile(`\bDROP\s+(\w+)`)
	renameRE     = regexp.MustCompile(`\bRENAME\b(\s+(\w+))?`)
	alterTypeRE  = regexp.MustCompile(`\bALTER\s+(COLUMN\s+)?\w+\s+(SET\s+DATA\s+)?TYPE\b`)
	modifyRE     = regexp.MustCompile(`\b(MODIFY|CHANGE)\b`)
	setNotNullRE = regexp.MustCompile(`\bSET\s+NOT\s+NULL\b`)
	addClauseRE  = regexp.MustCompile(`^ADD\s+(\w+)`)
	notNullRE    = regexp.MustCompile(`\bNOT\s+NULL\b`)
	defaultRE    = regexp.MustCompile(`\bDEFAULT\b`)
	alterTableRE = regexp.MustCompile(`^ALTER\s+TABLE\s+(IF\s+EXISTS\s+)?(ONLY\s+)?[\w.]+\s+`)
)

// dropKeepsColumns are the words after DROP in ALTER TABLE that drop
// something other than a column.
var dropKeepsColumns = []string{"CHECK", "CONSTRAINT", "DEFAULT", "EXPRESSION", "FOREIGN", "IDENTITY", "INDEX", "KEY", "NOT", "PARTITION", "PRIMARY"}

// renameKeepsColumns are the words after RENAME that rename something no
// query of an older release names.
var renameKeepsColumns = []string{"CONSTRAINT", "INDEX", "KEY"}

// addNotColumns are the words after ADD that add something other than a
// column.
var addNotColumns = []string{"CHECK", "CONSTRAINT", "FOREIGN", "FULLTEXT", "INDEX", "KEY", "PARTITION", "PRIMARY", "SPATIAL", "UNIQUE"}

// checkStatement applies the rules to one statement, already stripped of
// comments and literals and upper-cased with single spaces.
func checkStatement(code string) []finding {
	var out []finding
	if m := dropObjectRE.FindStringSubmatch(code); m != nil {
		out = append(out, finding{RuleDrop, "DROP " + m[1] + " removes what older releases still use"})
	}
	alter := alterTableRE.FindString(code)
	if m := renameRE.FindStringSubmatch(code); m != nil && !strings.HasPrefix(code, "ALTER INDEX") && !slices.Contains(renameKeepsColumns, m[2]) {
		out = append(out, finding{RuleRename, "renaming breaks older releases: add the new name, migrate online, drop the old later"})
	}
	if alter == "" {
		return out
	}
	if alterTypeRE.MatchString(code) || modifyRE.MatchString(code) {
		out = append(out, finding{RuleAlterType, "changing a column's type or size breaks older releases: add a new column instead"})
	}
	if setNotNullRE.MatchString(code) {
		out = append(out, finding{RuleNotNull, "SET NOT NULL makes older releases' inserts fail"})
	}
	for _, clause := range splitTopLevel(code[len(alter):]) {
		if m := dropClauseRE.FindStringSubmatch(clause); m != nil && strings.HasPrefix(clause, "DROP") && !slices.Contains(dropKeepsColumns, m[1]) {
			out = append(out, finding{RuleDrop, "DROP COLUMN removes what older releases still use"})
		}
		if m := addClauseRE.FindStringSubmatch(clause); m != nil && !slices.Contains(addNotColumns, m[1]) &&
			notNullRE.MatchString(clause) && !defaultRE.MatchString(clause) {
			out = append(out, finding{RuleNotNull, "a new column NOT NULL without DEFAULT makes older releases' inserts fail"})
		}
	}
	return out
}

// splitTopLevel splits an ALTER TABLE clause list on commas outside
// parentheses.
func splitTopLevel(s string) []string {
	var out []string
	depth, start := 0, 0
	for i, r := range s {
		switch r {
		case '(':
			depth++
		case ')':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, strings.TrimSpace(s[start:i]))
				start = i + 1
			}
		}
	}
	return append(out, strings.TrimSpace(s[start:]))
}
