package main

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/rivetmetal/rivet/core/release"
	"github.com/urfave/cli/v2"
)

func versionCommand() *cli.Command {
	return &cli.Command{
		Name:  "version",
		Usage: "print the release, service version, REST API range and RPC version of this binary",
		Flags: []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "print JSON"}},
		Action: func(c *cli.Context) error {
			info := buildInfo()
			if c.Bool("json") {
				enc := json.NewEncoder(c.App.Writer)
				enc.SetIndent("", "  ")
				return enc.Encode(info)
			}
			objs := make([]string, 0, len(info.Objects))
			for _, k := range release.Default().Head().ObjectKinds() {
				objs = append(objs, k+" "+info.Objects[k])
			}
			w := c.App.Writer
			fmt.Fprintf(w, "release:         %s\n", info.Release)
			fmt.Fprintf(w, "service version: %d\n", info.ServiceVersion)
			fmt.Fprintf(w, "api:             %s to %s\n", info.APIMin, info.APIMax)
			fmt.Fprintf(w, "rpc:             %s\n", info.RPC)
			fmt.Fprintf(w, "objects:         %s\n", strings.Join(objs, ", "))
			return nil
		},
	}
}

type versionInfo struct {
	Release        string            `json:"release"`
	ServiceVersion int               `json:"service_version"`
	APIMin         string            `json:"api_min"`
	APIMax         string            `json:"api_max"`
	RPC            string            `json:"rpc"`
	Objects        map[string]string `json:"objects"`
}

func buildInfo() versionInfo {
	head := release.Default().Head()
	info := versionInfo{
		Release:        release.Current,
		ServiceVersion: head.ServiceVersion,
		APIMin:         release.MinAPI.String(),
		APIMax:         head.API.String(),
		RPC:            head.RPC.String(),
		Objects:        map[string]string{},
	}
	for _, k := range head.ObjectKinds() {
		v, _ := head.ObjectVersion(k)
		info.Objects[k] = v.String()
	}
	return info
}
