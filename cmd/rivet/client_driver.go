package main

import (
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/rivetmetal/rivet/core/client"
	"github.com/urfave/cli/v2"
)

func driverCommand() *cli.Command {
	props := clientLeaf("properties", "list the driver_info properties a driver takes", "DRIVER", outputFlags(),
		func(c *cli.Context, api *client.Client) error {
			name, err := oneIdent(c, "driver")
			if err != nil {
				return err
			}
			p, err := newOutPrinter(c)
			if err != nil {
				return err
			}
			props, err := api.DriverProperties(c.Context, name)
			if err != nil {
				return cliError(err, clientTarget{client.Drivers, name})
			}
			rows := make([]client.Resource, 0, len(props))
			for _, k := range sortedKeysOf(props) {
				rows = append(rows, client.Resource{"property": k, "description": props[k]})
			}
			return p.list(rows, []string{"property", "description"})
		})
	listFlags := append(outputFlags(), &cli.BoolFlag{Name: "detail",
		Usage: "with each hardware interface's default and enabled implementations (API 1.30; json/yaml show them)"})
	return clientGroup("driver", "list and show drivers (hardware types)",
		clientLeaf("list", "list drivers", "", listFlags, func(c *cli.Context, api *client.Client) error {
			p, err := newOutPrinter(c)
			if err != nil {
				return err
			}
			o := client.ListOptions{Filters: url.Values{}}
			if c.Bool("detail") {
				o.Filters.Set("detail", "true")
			}
			items, err := api.List(c.Context, client.Drivers, o)
			if err != nil {
				return cliError(err, clientTarget{kind: client.Drivers})
			}
			return p.list(items, []string{"name", "hosts"})
		}),
		clientLeaf("show", "show a driver; from API 1.30, a table of each hardware interface's default and enabled implementations",
			"DRIVER", outputFlags(), showDriver),
		props,
	)
}

// showDriver shows a driver. As a table, the default_<iface>_interface and
// enabled_<iface>_interfaces fields (API 1.30) become a second table, one
// row per interface.
func showDriver(c *cli.Context, api *client.Client) error {
	name, err := oneIdent(c, "driver")
	if err != nil {
		return err
	}
	p, err := newOutPrinter(c)
	if err != nil {
		return err
	}
	r, err := api.Get(c.Context, client.Drivers, name)
	if err != nil {
		return cliError(err, clientTarget{client.Drivers, name})
	}
	if p.format != "table" || len(p.fields) > 0 {
		return p.one(r)
	}
	base, rows := client.Resource{}, []client.Resource{}
	for k, v := range r {
		if iface, ok := strings.CutPrefix(k, "default_"); ok && strings.HasSuffix(iface, "_interface") {
			iface = strings.TrimSuffix(iface, "_interface")
			rows = append(rows, client.Resource{"interface": iface, "default": v, "enabled": r["enabled_"+iface+"_interfaces"]})
			continue
		}
		if strings.HasPrefix(k, "enabled_") && strings.HasSuffix(k, "_interfaces") {
			continue
		}
		base[k] = v
	}
	if err := p.one(base); err != nil || len(rows) == 0 {
		return err
	}
	slices.SortFunc(rows, func(a, b client.Resource) int { return strings.Compare(a.String("interface"), b.String("interface")) })
	for _, row := range rows {
		var names []string
		if en, ok := row["enabled"].([]any); ok {
			for _, n := range en {
				names = append(names, fmt.Sprint(n))
			}
		}
		row["enabled"] = strings.Join(names, ", ")
	}
	return p.list(rows, []string{"interface", "default", "enabled"})
}
