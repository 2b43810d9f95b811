package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/rivetmetal/rivet/core/client"
	"github.com/rivetmetal/rivet/core/version"
	"github.com/urfave/cli/v2"
)

// resourceSpec describes the list/show/create/set/unset/delete commands of
// one API collection.
type resourceSpec struct {
	kind  client.Kind
	about string
	// cols are the table columns of list, from the non-detail fields.
	cols []string
	// filters maps a list flag to its query parameter.
	filters map[string]string
	// filterUsage documents each filter flag.
	filterUsage map[string]string
	// fieldFlags are flags create and set take for top-level string fields
	// (--deploy-interface fake sets deploy_interface), beside FIELD=VALUE.
	fieldFlags []fieldFlag
	// nodeFlag gives create --node NODE, a node's UUID or name, sent as
	// node_uuid (ports and portgroups belong to a node).
	nodeFlag bool
}

// createFlags are the flags of create: output, field flags and --node.
func (s resourceSpec) createFlags() []cli.Flag {
	flags := append(outputFlags(), s.fieldCLIFlags()...)
	if s.nodeFlag {
		flags = append(flags, &cli.StringFlag{Name: "node", Usage: "the `NODE` (UUID or name) this " + s.kind.Noun + " belongs to"})
	}
	return flags
}

// nodeValue sets node_uuid from --node: a UUID as it is, a name looked up
// first, so that it works at every API version (Ironic takes a name, as
// node_ident, only from API 1.94 and for ports only).
func (s resourceSpec) nodeValue(c *cli.Context, api *client.Client, vals map[string]any) error {
	if !s.nodeFlag || !c.IsSet("node") {
		return nil
	}
	if _, dup := vals["node_uuid"]; dup {
		return clientUsage(c, "--node and node_uuid= both set the node")
	}
	ident := c.String("node")
	if uuidRE.MatchString(ident) {
		vals["node_uuid"] = ident
		return nil
	}
	n, err := api.Get(c.Context, client.Nodes, ident, "uuid")
	if err != nil {
		return cliError(err, clientTarget{client.Nodes, ident})
	}
	u, _ := n["uuid"].(string)
	if u == "" {
		return cli.Exit(fmt.Sprintf("node %s: the API answered no uuid", ident), exitClientAPI)
	}
	vals["node_uuid"] = u
	return nil
}

// uuidRE matches a UUID in its canonical form.
var uuidRE = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// fieldFlag is a flag naming one top-level string field of a resource.
type fieldFlag struct {
	name, field, usage string
}

func (s resourceSpec) fieldCLIFlags() []cli.Flag {
	out := make([]cli.Flag, 0, len(s.fieldFlags))
	for _, f := range s.fieldFlags {
		out = append(out, &cli.StringFlag{Name: f.name, Usage: f.usage})
	}
	return out
}

// fieldValues adds the field flags the user set to vals; a flag and a
// FIELD=VALUE for one field is a usage error.
func (s resourceSpec) fieldValues(c *cli.Context, vals map[string]any) error {
	for _, f := range s.fieldFlags {
		if !c.IsSet(f.name) {
			continue
		}
		if _, dup := vals[f.field]; dup {
			return clientUsage(c, "--%s and %s= both set %s", f.name, f.field, f.field)
		}
		vals[f.field] = c.String(f.name)
	}
	return nil
}

// apiAction is a client command's body, given a ready API client.
type apiAction func(c *cli.Context, api *client.Client) error

// clientLeaf is a client command: connection flags plus its own, flags
// allowed after positional arguments, and the API client built first.
func clientLeaf(name, about, argsUsage string, flags []cli.Flag, fn apiAction) *cli.Command {
	return &cli.Command{
		Name: name, Usage: about, ArgsUsage: argsUsage,
		Flags:        append(connFlags(), flags...),
		BashComplete: func(c *cli.Context) { completeLeaf(c, argsUsage) },
		Action: interleaved(func(c *cli.Context) error {
			api, err := newAPIClient(c)
			if err != nil {
				return err
			}
			err = fn(c, api)
			reportLatest(c, api)
			return err
		}),
	}
}

// reportLatest tells the user which version "latest" turned out to be
// when it is newer than this client knows (use case 9): the output may then
// hold fields this client has no names for.
func reportLatest(c *cli.Context, api *client.Client) {
	n := api.Negotiation()
	if n.Requested.Kind == client.Latest && n.Confirmed && client.MaxVersion.Less(n.Effective) {
		fmt.Fprintf(c.App.ErrWriter, "rivet: note: the server chose API %s for latest; this client knows %s to %s and shows newer fields as received\n",
			n.Effective, client.MinVersion, client.MaxVersion)
	}
}

// clientGroup is a command holding subcommands; it also takes the
// connection flags (rivet node --url … list).
func clientGroup(name, about string, subs ...*cli.Command) *cli.Command {
	return &cli.Command{Name: name, Usage: about, Flags: connFlags(), Subcommands: subs}
}

func (s resourceSpec) group(extra ...*cli.Command) *cli.Command {
	return clientGroup(s.kind.Noun, s.about, append(s.commands(), extra...)...)
}

func (s resourceSpec) commands() []*cli.Command {
	noun := strings.ToUpper(s.kind.Noun)
	listFlags := append(outputFlags(),
		&cli.BoolFlag{Name: "detail", Usage: "fetch full objects (json/yaml show every field)"},
		&cli.IntFlag{Name: "limit", Usage: "return at most `N` objects (0: all, following the server's pages)"},
		&cli.StringFlag{Name: "sort", Usage: "sort by `KEY[:asc|desc]`"},
	)
	for _, f := range sortedKeysOf(s.filters) {
		listFlags = append(listFlags, &cli.StringFlag{Name: f, Usage: s.filterUsage[f]})
	}
	return []*cli.Command{
		clientLeaf("list", "list "+s.kind.Path, "", listFlags, s.list),
		clientLeaf("show", "show one "+s.kind.Noun, noun, outputFlags(), s.show),
		clientLeaf("create", "create a "+s.kind.Noun+" from FIELD=VALUE pairs (FIELD:=JSON for non-strings; a/b=v nests)",
			"FIELD=VALUE…", s.createFlags(), s.create),
		clientLeaf("set", "set fields: PATH=VALUE (PATH:=JSON for non-strings; driver_info/ipmi_address=… reaches inside); "+
			"prints nothing, or the updated "+s.kind.Noun+" with -f/--fields",
			noun+" PATH=VALUE…", append(outputFlags(), s.fieldCLIFlags()...), s.set),
		clientLeaf("unset", "remove fields by PATH; prints nothing, or the updated "+s.kind.Noun+" with -f/--fields",
			noun+" PATH…", outputFlags(), s.unset),
		clientLeaf("delete", "delete "+s.kind.Path, noun+"…", []cli.Flag{concurrencyFlag()}, s.delete),
	}
}

func (s resourceSpec) list(c *cli.Context, api *client.Client) error {
	p, err := newOutPrinter(c)
	if err != nil {
		return err
	}
	o := client.ListOptions{Detail: c.Bool("detail"), Limit: c.Int("limit"), Filters: url.Values{}}
	if fieldsSupported(api) {
		o.Fields = p.fields
	} else if len(p.fields) > 0 {
		o.Detail = true
	}
	if key, dir, ok := strings.Cut(c.String("sort"), ":"); key != "" {
		o.SortKey = key
		if ok {
			o.SortDir = dir
		}
	}
	for flagName, param := range s.filters {
		if v := c.String(flagName); v != "" {
			o.Filters.Set(param, v)
		}
	}
	items, err := api.List(c.Context, s.kind, o)
	if err != nil {
		return cliError(err, clientTarget{kind: s.kind})
	}
	return p.list(items, s.cols)
}

func (s resourceSpec) show(c *cli.Context, api *client.Client) error {
	ident, err := oneIdent(c, s.kind.Noun)
	if err != nil {
		return err
	}
	p, err := newOutPrinter(c)
	if err != nil {
		return err
	}
	var fields []string
	if s.kind != client.Drivers && fieldsSupported(api) { // drivers take fields from 1.77
		fields = p.fields
	}
	r, err := api.Get(c.Context, s.kind, ident, fields...)
	if err != nil {
		return cliError(err, clientTarget{s.kind, ident})
	}
	return p.one(r)
}

func (s resourceSpec) create(c *cli.Context, api *client.Client) error {
	p, err := newOutPrinter(c)
	if err != nil {
		return err
	}
	vals, err := parseAssignments(c.Args().Slice())
	if err != nil {
		return err
	}
	if err := s.fieldValues(c, vals); err != nil {
		return err
	}
	if err := s.nodeValue(c, api, vals); err != nil {
		return err
	}
	body := map[string]any{}
	for _, path := range sortedKeysOf(vals) {
		nestValue(body, strings.Split(strings.Trim(path, "/"), "/"), vals[path])
	}
	r, err := api.Create(c.Context, s.kind, body)
	if err != nil {
		return cliError(err, clientTarget{kind: s.kind})
	}
	return p.one(r)
}

func (s resourceSpec) set(c *cli.Context, api *client.Client) error {
	args := c.Args().Slice()
	if len(args) < 1 {
		return clientUsage(c, "give the %s and at least one PATH=VALUE", s.kind.Noun)
	}
	vals, err := parseAssignments(args[1:])
	if err != nil {
		return err
	}
	if err := s.fieldValues(c, vals); err != nil {
		return err
	}
	if len(vals) == 0 {
		return clientUsage(c, "give the %s and at least one PATH=VALUE", s.kind.Noun)
	}
	r, err := api.Update(c.Context, s.kind, args[0], client.SetOps(vals))
	if err != nil {
		return cliError(err, clientTarget{s.kind, args[0]})
	}
	return printUpdated(c, r)
}

// printUpdated prints what a set or unset answered when -f/--format or
// --fields asks for it; otherwise nothing, as `baremetal node set`.
func printUpdated(c *cli.Context, r client.Resource) error {
	if !c.IsSet(flagFormat) && !c.IsSet(flagFields) {
		return nil
	}
	p, err := newOutPrinter(c)
	if err != nil {
		return err
	}
	return p.one(r)
}

func (s resourceSpec) unset(c *cli.Context, api *client.Client) error {
	args := c.Args().Slice()
	if len(args) < 2 {
		return clientUsage(c, "give the %s and at least one PATH", s.kind.Noun)
	}
	r, err := api.Update(c.Context, s.kind, args[0], client.UnsetOps(args[1:]...))
	if err != nil {
		return cliError(err, clientTarget{s.kind, args[0]})
	}
	return printUpdated(c, r)
}

func (s resourceSpec) delete(c *cli.Context, api *client.Client) error {
	return runBulk(c, api, s.kind, func(ctx context.Context, ident string) (string, error) {
		return fmt.Sprintf("deleted %s %s", s.kind.Noun, ident), api.Delete(ctx, s.kind, ident)
	}, nil)
}

// fieldsSupported: ?fields= needs API 1.8; below it the client filters.
func fieldsSupported(api *client.Client) bool {
	n := api.Negotiation()
	if n.Requested.Kind == client.Exact {
		return n.Requested.Version.AtLeast(version.New(1, 8))
	}
	return !n.Confirmed || n.Effective.AtLeast(version.New(1, 8))
}

// parseAssignments reads PATH=VALUE (a string) and PATH:=JSON pairs.
func parseAssignments(args []string) (map[string]any, error) {
	out := map[string]any{}
	for _, a := range args {
		k, v, ok := strings.Cut(a, "=")
		if !ok || strings.Trim(k, "/:") == "" {
			return nil, cli.Exit(fmt.Sprintf("%q is not PATH=VALUE or PATH:=JSON", a), exitClientUsage)
		}
		if raw, isJSON := strings.CutSuffix(k, ":"); isJSON {
			var j any
			if err := json.Unmarshal([]byte(v), &j); err != nil {
				return nil, cli.Exit(fmt.Sprintf("%s:=%s: invalid JSON: %v", raw, v, err), exitClientUsage)
			}
			out[raw] = j
			continue
		}
		out[k] = v
	}
	return out, nil
}

// nestValue sets path inside m, creating maps on the way.
func nestValue(m map[string]any, path []string, v any) {
	for _, p := range path[:len(path)-1] {
		sub, ok := m[p].(map[string]any)
		if !ok {
			sub = map[string]any{}
			m[p] = sub
		}
		m = sub
	}
	m[path[len(path)-1]] = v
}

func oneIdent(c *cli.Context, noun string) (string, error) {
	if c.NArg() != 1 {
		return "", clientUsage(c, "give exactly one %s (UUID or name)", noun)
	}
	return c.Args().First(), nil
}

// clientUsage is a bad-arguments error pointing at the command's help.
func clientUsage(c *cli.Context, format string, args ...any) error {
	return cli.Exit(fmt.Sprintf(format, args...)+fmt.Sprintf(" (see rivet %s --help)", strings.Join(clientCommandPath(c), " ")), exitClientUsage)
}

func sortedKeysOf[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
