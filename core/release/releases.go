package release

import (
	"sync"

	"github.com/rivetmetal/rivet/core/version"
)

// Current is the release string of this build, reported by `rivet version`
// and registered by every service. Cutting a release sets it to the release's
// semver; right after, it moves to the next ".dev".
const Current = "0.4.0.dev"

// v is version.MustParse, short for the table below.
func v(s string) version.Version { return version.MustParse(s) }

// head describes the code as it is. Change it in the same commit as the code:
//   - API: raised as the REST API implements each microversion (1.1–1.26
//     for release 0.1, up to 1.31 for 0.2, up to 1.110 for 0.3; 1.27, soft
//     power, needs RPC 1.1): the highest N such that every version up to N
//     is implemented (later versions are tested with a raised maximum until
//     then);
//   - RPC: equal to the conductor RPC API version;
//   - Objects: every registered object kind with the versions HEAD may write;
//   - ServiceVersion: bumped with any RPC change or online migration.
var head = Entry{
	Version: HeadKey,
	API:     v("1.110"),
	RPC:     v("1.6"),
	Objects: map[string][]version.Version{
		"Chassis":           {v("1.0")},
		"Conductor":         {v("1.0")},
		"DeployTemplate":    {v("1.0")},
		"Node":              {v("1.2"), v("1.1"), v("1.0")},
		"Port":              {v("1.1"), v("1.0")},
		"Portgroup":         {v("1.1"), v("1.0")},
		"Runbook":           {v("1.0")},
		"Trait":             {v("1.0")},
		"VolumeConnector":   {v("1.0")},
		"VolumeTarget":      {v("1.0")},
		"Allocation":        {v("1.0")},
		"NodeHistory":       {v("1.0")},
		"BIOSSetting":       {v("1.0")},
		"InspectionRule":    {v("1.0")},
		"FirmwareComponent": {v("1.0")},
	},
	ServiceVersion: 4,
}

// releases lists the cut releases, oldest first. Cutting a release appends a
// copy of head with its semver key and name; see docs/contributor/. An entry
// never changes once cut, but for recording its Commit (and Point) right after
// the cut and at each point release.
var releases = []Entry{
	{
		Version: "0.1",
		Name:    "anvil",
		API:     v("1.26"),
		RPC:     v("1.0"),
		Objects: map[string][]version.Version{
			"Chassis":   {v("1.0")},
			"Conductor": {v("1.0")},
			"Node":      {v("1.0")},
			"Port":      {v("1.0")},
			"Portgroup": {v("1.0")},
		},
		ServiceVersion: 1,
		// 0.1.0 was cut at 9b63bb6206105ba196ae9f92f2a2f93350235273.
		Commit: "d50a3c867b04a6f199e74e8624aba947a1e5c486",
		Point:  "0.1.1",
	},
	{
		Version: "0.2",
		Name:    "bellows",
		API:     v("1.31"),
		RPC:     v("1.4"),
		Objects: map[string][]version.Version{
			"Chassis":   {v("1.0")},
			"Conductor": {v("1.0")},
			"Node":      {v("1.1"), v("1.0")},
			"Port":      {v("1.0")},
			"Portgroup": {v("1.0")},
		},
		ServiceVersion: 2,
		Commit:         "a87bcb7aced15a26ac21d06281da0b13f9cfb9cf",
	},
	{
		Version: "0.3",
		Name:    "crucible",
		API:     v("1.110"),
		RPC:     v("1.5"),
		Objects: map[string][]version.Version{
			"Allocation":        {v("1.0")},
			"BIOSSetting":       {v("1.0")},
			"Chassis":           {v("1.0")},
			"Conductor":         {v("1.0")},
			"DeployTemplate":    {v("1.0")},
			"FirmwareComponent": {v("1.0")},
			"InspectionRule":    {v("1.0")},
			"Node":              {v("1.2"), v("1.1"), v("1.0")},
			"NodeHistory":       {v("1.0")},
			"Port":              {v("1.1"), v("1.0")},
			"Portgroup":         {v("1.1"), v("1.0")},
			"Runbook":           {v("1.0")},
			"Trait":             {v("1.0")},
			"VolumeConnector":   {v("1.0")},
			"VolumeTarget":      {v("1.0")},
		},
		ServiceVersion: 3,
		Commit:         "00cb846b7da8c927d0a48ad3718998dd1b1c142c",
	},
}

var (
	defaultOnce  sync.Once
	defaultTable *Table
)

// Default returns Rivet's release table. It panics if the table is invalid,
// which TestDefaultTableValid catches before anything ships.
func Default() *Table {
	defaultOnce.Do(func() {
		t, err := NewTable(head, releases...)
		if err != nil {
			panic(err)
		}
		defaultTable = t
	})
	return defaultTable
}

// MinAPI is the lowest REST API microversion Rivet serves, as Ironic (1.1).
var MinAPI = version.Version{Major: 1, Minor: 1}
