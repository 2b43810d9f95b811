package db

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestMaskConnection(t *testing.T) {
	tests := map[string]struct{ in, want string }{
		"password":             {"postgresql://u:s3cret@127.0.0.1:1/x", "postgresql://u:***@127.0.0.1:1/x"},
		"no password":          {"mysql://root@127.0.0.1/x", "mysql://root@127.0.0.1/x"},
		"password with @ /":    {"mysql://u:p@ss/w@rd@db:3306/rivet?charset=utf8", "mysql://u:***@db:3306/rivet?charset=utf8"},
		"escaped":              {"postgresql://u:p%40ss@db/rivet", "postgresql://u:***@db/rivet"},
		"malformed host":       {"postgresql://u:s3cret@[::1/x", "postgresql://u:***@[::1/x"},
		"not a URL":            {"s3cret", "s3cret"},
		"sqlite":               {"sqlite:////var/lib/rivet.db", "sqlite:////var/lib/rivet.db"},
		"at in query only":     {"postgresql://db/x?user=a@b", "postgresql://db/x?user=a@b"},
		"empty password":       {"postgresql://u:@db/x", "postgresql://u:@db/x"},
		"driver in scheme":     {"mysql+pymysql://rivet:pw@db/rivet", "mysql+pymysql://rivet:***@db/rivet"},
		"user only with at":    {"postgresql://u@db/x", "postgresql://u@db/x"},
		"password in fragment": {"postgresql://db/x#u:s@", "postgresql://db/x#u:s@"},
		"password parameter":   {"postgresql://u@db/x?sslmode=require&password=s3cret", "postgresql://u@db/x?sslmode=require&password=***"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := MaskConnection(tc.in); got != tc.want {
				t.Errorf("MaskConnection(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestParseConnection(t *testing.T) {
	type parsed struct {
		Dialect Dialect
		Scheme  string
		Path    string
		Memory  bool
	}
	tests := map[string]struct {
		in      string
		want    parsed
		wantErr string // substring; "" means success
	}{
		"sqlite memory bare":     {in: "sqlite://", want: parsed{Dialect: SQLite, Memory: true}},
		"sqlite memory explicit": {in: "sqlite:///:memory:", want: parsed{Dialect: SQLite, Memory: true}},
		"sqlite relative":        {in: "sqlite:///data/rivet.db", want: parsed{Dialect: SQLite, Path: "data/rivet.db"}},
		"sqlite absolute":        {in: "sqlite:////var/lib/rivet/rivet.db", want: parsed{Dialect: SQLite, Path: "/var/lib/rivet/rivet.db"}},
		"sqlite driver suffix":   {in: "sqlite+pysqlite:///r.db", want: parsed{Dialect: SQLite, Path: "r.db"}},
		"postgresql":             {in: "postgresql://u:p@db/rivet", want: parsed{Dialect: Postgres, Scheme: "postgresql", Path: "/rivet"}},
		"postgres":               {in: "postgres://db/rivet", want: parsed{Dialect: Postgres, Scheme: "postgres", Path: "/rivet"}},
		"psycopg2":               {in: "postgresql+psycopg2://db/rivet", want: parsed{Dialect: Postgres, Scheme: "postgresql", Path: "/rivet"}},
		"mysql":                  {in: "mysql://root@db/rivet", want: parsed{Dialect: MySQL, Scheme: "mysql", Path: "/rivet"}},
		"pymysql":                {in: "mysql+pymysql://root@db/rivet?charset=utf8", want: parsed{Dialect: MySQL, Scheme: "mysql", Path: "/rivet"}},
		"upper-case scheme":      {in: "MySQL://root@db/rivet", want: parsed{Dialect: MySQL, Scheme: "mysql", Path: "/rivet"}},

		"empty":            {in: " ", wantErr: "no connection URL is configured"},
		"not a URL":        {in: "rivet.db", wantErr: "not a URL"},
		"unknown scheme":   {in: "oracle://u:s3cret@db/x", wantErr: `unknown dialect "oracle"`},
		"sqlite host":      {in: "sqlite://host/x.db", wantErr: "SQLite URLs have no host"},
		"sqlite query":     {in: "sqlite:///x.db?mode=ro", wantErr: "take no query parameters"},
		"sqlite no file":   {in: "sqlite:///", wantErr: "no database file"},
		"malformed host":   {in: "postgresql://u:s3cret@[::1/x", wantErr: "malformed URL"},
		"malformed escape": {in: "postgresql://u:s3cret@db/x%zz", wantErr: "malformed URL"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			c, err := parseConnection(tc.in)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tc.wantErr)
				}
				if strings.Contains(err.Error(), "s3cret") {
					t.Errorf("error leaks the password: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := parsed{Dialect: c.dialect, Path: c.path, Memory: c.memory}
			if c.url != nil {
				got.Scheme, got.Path = c.url.Scheme, c.url.Path
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
