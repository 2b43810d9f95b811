package api

import (
	"os"
	"strings"
	"testing"

	"github.com/rivetmetal/rivet/core/version"
)

// The range docs/api-versions.md covers.
const (
	docVersionsFirst = 32
	docVersionsLast  = 110
)

// docVersionRow is one row of docs/api-versions.md's table.
type docVersionRow struct {
	adds, status, ref string
}

// readAPIVersionsDoc parses docs/api-versions.md's table rows, by version.
func readAPIVersionsDoc(t *testing.T) map[string]docVersionRow {
	t.Helper()
	data, err := os.ReadFile("../../docs/api-versions.md")
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]docVersionRow{}
	for i, line := range strings.Split(string(data), "\n") {
		if !strings.HasPrefix(line, "| 1.") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "| "), "|")
		if len(cells) != 4 {
			t.Errorf("api-versions.md line %d: %d cells, want 4: %s", i+1, len(cells), line)
			continue
		}
		for j := range cells {
			cells[j] = strings.TrimSpace(cells[j])
		}
		v := cells[0]
		if _, dup := rows[v]; dup {
			t.Errorf("api-versions.md lists %s twice", v)
		}
		rows[v] = docVersionRow{adds: cells[1], status: cells[2], ref: strings.Trim(cells[3], "`")}
	}
	return rows
}

// TestAPIVersionsDoc keeps docs/api-versions.md true to versionTests: every
// version from 1.32 to 1.110 has a row; a version versionTests proves is
// "done" naming that test, and one it does not is "missing" naming its
// owner, so the table can neither claim a version without a test nor omit
// one that has become done.
func TestAPIVersionsDoc(t *testing.T) {
	rows := readAPIVersionsDoc(t)
	for minor := docVersionsFirst; minor <= docVersionsLast; minor++ {
		v := version.Version{Major: 1, Minor: minor}.String()
		row, ok := rows[v]
		if !ok {
			t.Errorf("docs/api-versions.md has no row for %s", v)
			continue
		}
		delete(rows, v)
		if row.adds == "" {
			t.Errorf("%s: says nothing about what it adds", v)
		}
		test, proven := versionTests[v]
		switch {
		case proven && row.status != "done":
			t.Errorf("%s is proven by %s (versionTests) but the table marks it %q", v, test, row.status)
		case proven && row.ref != test:
			t.Errorf("%s: the table names test %q, versionTests %q", v, row.ref, test)
		case !proven && row.status == "done":
			t.Errorf("%s is marked done but versionTests names no test for it", v)
		case !proven && (row.status != "missing" || !strings.HasPrefix(row.ref, "owned by: ") || len(row.ref) == len("owned by: ")):
			t.Errorf("%s: not in versionTests, so it must be \"missing\" with \"owned by: <area>\"; got %q, %q", v, row.status, row.ref)
		}
	}
	for v := range rows {
		t.Errorf("docs/api-versions.md lists %s, outside 1.%d–1.%d", v, docVersionsFirst, docVersionsLast)
	}
	// Every version versionTests claims in the range is in the table (the
	// loop above covers the range; this catches a range that shrinks).
	for v := range versionTests {
		ver, err := version.Parse(v)
		if err != nil {
			t.Errorf("versionTests key %q: %v", v, err)
			continue
		}
		if ver.Minor > docVersionsLast {
			t.Errorf("versionTests proves %s, beyond the table's 1.%d: extend docs/api-versions.md and docVersionsLast", v, docVersionsLast)
		}
	}
}
