package main

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/jedib0t/go-pretty/v6/table"
	"github.com/jedib0t/go-pretty/v6/text"
	"github.com/rivetmetal/rivet/core/client"
	"github.com/urfave/cli/v2"
	"sigs.k8s.io/yaml"
)

// outPrinter renders resources in the format the user chose: table (the
// default), json, yaml, or value (bare values, one per line; a list row's
// values are separated by spaces).
type outPrinter struct {
	w      io.Writer
	format string
	fields []string
}

func newOutPrinter(c *cli.Context) (*outPrinter, error) {
	p := &outPrinter{w: c.App.Writer, format: clientSetting(c, flagFormat, "table")}
	switch p.format {
	case "table", "json", "yaml", "value":
	default:
		return nil, cli.Exit(fmt.Sprintf("unknown format %q (use -f table, json, yaml or value)", p.format), exitClientUsage)
	}
	for _, f := range strings.Split(clientSetting(c, flagFields, ""), ",") {
		if f = strings.TrimSpace(f); f != "" {
			p.fields = append(p.fields, f)
		}
	}
	return p, nil
}

// list prints a collection; cols are the table columns when --fields is
// not given.
func (p *outPrinter) list(items []client.Resource, cols []string) error {
	if len(p.fields) > 0 {
		cols = p.fields
	}
	switch p.format {
	case "json", "yaml":
		out := make([]any, 0, len(items))
		for _, it := range items {
			out = append(out, p.pick(it))
		}
		return p.structured(out)
	case "value":
		for _, it := range items {
			vals := make([]string, 0, len(cols))
			for _, c := range cols {
				vals = append(vals, fmtCell(it[c], ""))
			}
			fmt.Fprintln(p.w, strings.Join(vals, " "))
		}
		return nil
	}
	t := p.table()
	hdr := table.Row{}
	for _, c := range cols {
		hdr = append(hdr, columnTitle(c))
	}
	t.AppendHeader(hdr)
	for _, it := range items {
		row := table.Row{}
		for _, c := range cols {
			row = append(row, fmtCell(it[c], "None"))
		}
		t.AppendRow(row)
	}
	t.Render()
	return nil
}

// one prints a single resource, fields sorted unless --fields orders them.
func (p *outPrinter) one(r client.Resource) error {
	r = p.pick(r)
	switch p.format {
	case "json", "yaml":
		return p.structured(r)
	}
	keys := p.fields
	if len(keys) == 0 {
		keys = make([]string, 0, len(r))
		for k := range r {
			keys = append(keys, k)
		}
		sort.Strings(keys)
	}
	if p.format == "value" {
		for _, k := range keys {
			fmt.Fprintln(p.w, fmtCell(r[k], ""))
		}
		return nil
	}
	t := p.table()
	t.AppendHeader(table.Row{"Field", "Value"})
	for _, k := range keys {
		t.AppendRow(table.Row{k, fmtCell(r[k], "None")})
	}
	t.Render()
	return nil
}

// pick keeps the --fields of r, or all of it.
func (p *outPrinter) pick(r client.Resource) client.Resource {
	if len(p.fields) == 0 {
		return r
	}
	out := client.Resource{}
	for _, f := range p.fields {
		out[f] = r[f]
	}
	return out
}

func (p *outPrinter) structured(v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	if p.format == "yaml" {
		if b, err = yaml.JSONToYAML(b); err != nil {
			return err
		}
		_, err = p.w.Write(b)
		return err
	}
	_, err = fmt.Fprintln(p.w, string(b))
	return err
}

func (p *outPrinter) table() table.Writer {
	t := table.NewWriter()
	t.SetOutputMirror(p.w)
	t.SetStyle(table.StyleLight)
	t.Style().Format.Header = text.FormatDefault // keep titles as written
	return t
}

// fmtCell renders a value: strings bare, null as null, the rest compact JSON.
func fmtCell(v any, null string) string {
	switch v := v.(type) {
	case nil:
		return null
	case string:
		return v
	case json.Number:
		return v.String()
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// columnTitle turns a field name into a column title: provision_state → "Provision State".
func columnTitle(field string) string {
	words := strings.Fields(strings.ReplaceAll(field, "_", " "))
	for i, w := range words {
		switch w {
		case "uuid", "id":
			words[i] = strings.ToUpper(w)
		default:
			words[i] = strings.ToUpper(w[:1]) + w[1:]
		}
	}
	return strings.Join(words, " ")
}
