package migrations

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rivetmetal/rivet/db"
)

// TestMigrationsFollowPolicy is the gate of ARCHITECTURE §3.9: every
// shipped migration of every dialect is additive, or carries a recorded
// exception.
func TestMigrationsFollowPolicy(t *testing.T) {
	for _, d := range db.Dialects() {
		fsys, err := Files(d)
		if err != nil {
			t.Fatal(err)
		}
		vs, err := CheckFiles(fsys, AllowedDrops)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range vs {
			t.Errorf("%s/%s", d, v)
		}
	}
}

// TestPolicyRejectsBadMigrations runs the checker on deliberately bad
// fixtures, one per violation, so the gate above is seen to bite.
func TestPolicyRejectsBadMigrations(t *testing.T) {
	allow := []DropException{{Migration: "20270101000011_drop_allowed", DeprecatedIn: "0.2", Reason: "test"}}
	tests := map[string][]Rule{
		"20270101000000_drop_table.up.sql":              {RuleDrop},
		"20270101000001_drop_column.up.sql":             {RuleDrop},
		"20270101000002_drop_column_mysql_short.up.sql": {RuleDrop},
		"20270101000003_rename_column.up.sql":           {RuleRename},
		"20270101000004_rename_table.up.sql":            {RuleRename},
		"20270101000005_alter_type.up.sql":              {RuleAlterType},
		"20270101000006_modify_column.up.sql":           {RuleAlterType},
		"20270101000007_change_column.up.sql":           {RuleAlterType},
		"20270101000008_add_not_null.up.sql":            {RuleNotNull},
		"20270101000009_set_not_null.up.sql":            {RuleNotNull},
		"20270101000010_drop_with_comment_only.up.sql":  {RuleDrop},
		"20270101000011_drop_allowed.up.sql":            nil,
		"20270101000012_additive_ok.up.sql":             nil,
	}
	files, _ := filepath.Glob(filepath.Join("testdata", "policy", "*.sql"))
	if len(files) != len(tests) {
		t.Errorf("%d fixtures, %d test cases: keep them in step", len(files), len(tests))
	}
	for name, want := range tests {
		t.Run(name, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join("testdata", "policy", name))
			if err != nil {
				t.Fatal(err)
			}
			var got []Rule
			vs := CheckPolicy(name, string(b), allow)
			for _, v := range vs {
				got = append(got, v.Rule)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("rules (-want +got):\n%s\nviolations: %v", diff, vs)
			}
		})
	}
}

func TestDropExceptionNeedsBothHalves(t *testing.T) {
	const drop = "ALTER TABLE nodes DROP COLUMN extra;\n"
	const comment = "-- rivet:allow-drop deprecated-in=0.2 reason=replaced by meta\n"
	listed := []DropException{{Migration: "20270101000000_drop", DeprecatedIn: "0.2"}}
	tests := map[string]struct {
		sql   string
		allow []DropException
		want  string // substring of the violation; "" means allowed
	}{
		"both":            {comment + drop, listed, ""},
		"comment only":    {comment + drop, nil, "no matching entry in AllowedDrops"},
		"allow-list only": {drop, listed, "has no rivet:allow-drop comment"},
		"release differs": {strings.Replace(comment, "0.2", "0.3", 1) + drop, listed, "deprecated-in=0.3 in the file but 0.2"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			vs := CheckPolicy("sql/postgresql/20270101000000_drop.tx.up.sql", tc.sql, tc.allow)
			switch {
			case tc.want == "" && len(vs) > 0:
				t.Errorf("violations %v, want none", vs)
			case tc.want != "" && (len(vs) != 1 || !strings.Contains(vs[0].Why, tc.want)):
				t.Errorf("violations %v, want one mentioning %q", vs, tc.want)
			}
		})
	}
}

func TestViolationNamesFileAndLine(t *testing.T) {
	vs := CheckPolicy("x.up.sql", "-- a comment\n\nCREATE INDEX i ON t (c);\n\nALTER TABLE t\n  RENAME TO u;", nil)
	want := []string{"x.up.sql:5: rename: renaming breaks older releases: add the new name, migrate online, drop the old later: ALTER TABLE t RENAME TO u"}
	var got []string
	for _, v := range vs {
		got = append(got, v.String())
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
