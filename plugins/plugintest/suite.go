package plugintest

import (
	"context"
	"errors"
	"net"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rivetmetal/rivet/plugins"
	"github.com/rivetmetal/rivet/plugins/host"
)

// SecretMarker is put in the node's driver_info under a secret key; no
// error returned by any call may contain it.
const SecretMarker = "plugintest-s3cr3t-value"

var macRE = regexp.MustCompile(`^[0-9a-f]{2}(:[0-9a-f]{2}){5}$`)

// Run runs the conformance suite against tgt with node (whose DriverInfo
// must be what the driver needs to reach the node's BMC). It adds a secret
// key to the driver_info to check that no error leaks it.
func Run(t *testing.T, tgt Target, node plugins.Node) {
	t.Helper()
	for _, c := range Cases(tgt, node) {
		t.Run(c.Name, c.Run)
	}
}

// Case is one part of the suite, run as a subtest.
type Case struct {
	// Name is the subtest's name: "info", "power", "power v2",
	// "management", "deploy", "inspect", "raid", "bios", "firmware", "console" or "validate".
	Name string
	// Run checks that part against the target.
	Run func(t *testing.T)
}

// Cases returns the suite's parts in Run's order, for a caller that runs
// them one by one: a matrix of BMC peers, each with its own known
// deviations (a BMC without virtual media cannot pass "deploy").
func Cases(tgt Target, node plugins.Node) []Case {
	info := plugins.DriverInfo{"plugintest_password": SecretMarker}
	for k, v := range node.DriverInfo {
		info[k] = v
	}
	node.DriverInfo = info
	s := &suite{tgt: tgt, node: node}
	return []Case{
		{"info", s.info},
		{"power", s.power},
		{"power v2", s.powerV2},
		{"management", s.management},
		{"management v2", s.managementV2},
		{"deploy", s.deploy},
		{"inspect", s.inspect},
		{"raid", s.raid},
		{"bios", s.bios},
		{"firmware", s.firmware},
		{"validate", s.validate},
		{"console", s.console},
	}
}

type suite struct {
	tgt  Target
	node plugins.Node
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}

// impl returns the driver as T when the level has it and the interface is
// advertised; otherwise it checks that a remote level answers
// ErrNotSupported (through probe) and skips.
func impl[T any](t *testing.T, s *suite, iface plugins.Interface, probe func(T) error) (T, bool) {
	t.Helper()
	d, has := s.tgt.Driver.(T)
	if _, advertised := s.tgt.Info.Interfaces[iface]; advertised && has {
		return d, true
	}
	if s.tgt.Remote && has && probe != nil {
		if err := probe(d); !errors.Is(err, plugins.ErrNotSupported) {
			t.Errorf("interface %s not advertised, call returned %v, want ErrNotSupported", iface, err)
		}
	}
	var zero T
	return zero, false
}

// check fails t on err and on any error leaking the secret.
func (s *suite) check(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil {
		s.noSecret(t, err)
		t.Fatalf("%s: %v", what, err)
	}
}

func (s *suite) noSecret(t *testing.T, err error) {
	t.Helper()
	if err != nil && strings.Contains(err.Error(), SecretMarker) {
		t.Errorf("error leaks a driver_info secret: %v", err)
	}
}

func (s *suite) info(t *testing.T) {
	i := s.tgt.Info
	if i.Name == "" || len(i.HardwareTypes) == 0 || len(i.Interfaces) == 0 {
		t.Fatalf("info incomplete: %+v", i)
	}
	for iface, vs := range i.Interfaces {
		if len(vs) == 0 || !slices.IsSorted(vs) {
			t.Errorf("interface %s versions %v: want non-empty, ascending", iface, vs)
		}
	}
}

func (s *suite) power(t *testing.T) {
	d, ok := impl(t, s, plugins.InterfacePower, func(d plugins.PowerInterface) error {
		_, err := d.GetPowerState(ctx(t), s.node)
		return err
	})
	if !ok {
		t.Skip("power interface not served")
	}
	c := ctx(t)
	for _, target := range []plugins.PowerState{plugins.PowerOn, plugins.PowerOff, plugins.PowerOff} {
		s.check(t, "set power "+string(target), d.SetPowerState(c, s.node, target))
		got, err := d.GetPowerState(c, s.node)
		s.check(t, "get power", err)
		if got != target {
			t.Errorf("after set %q: power state %q", target, got)
		}
	}
	s.check(t, "reboot", d.Reboot(c, s.node))
	if got, err := d.GetPowerState(c, s.node); err != nil || got != plugins.PowerOn {
		t.Errorf("after reboot: power state %q, %v; want %q", got, err, plugins.PowerOn)
	}
	if s.tgt.Remote { // the SDK validates targets before the driver sees them
		err := d.SetPowerState(c, s.node, plugins.Rebooting)
		if !errors.Is(err, plugins.ErrNotSupported) {
			t.Errorf("set power %q: %v, want ErrNotSupported", plugins.Rebooting, err)
		}
	}
}

// actor is the level's host.PowerActor: the host's and the gRPC
// client's own, or the SDK's adapter around a driver value.
func (s *suite) actor() (host.PowerActor, bool) {
	if a, ok := s.tgt.Driver.(host.PowerActor); ok {
		return a, true
	}
	d, ok := s.tgt.Driver.(plugins.PowerInterface)
	if !ok {
		return nil, false
	}
	return host.LocalPowerActor(d), true
}

// powerV2 checks power interface version 2 where it was negotiated: every
// action with a timeout reaches its final state, soft actions work when
// soft_power is advertised; and, where it was not, that timeouts and soft
// actions are refused with ErrNotSupported before anything reaches the
// hardware.
func (s *suite) powerV2(t *testing.T) {
	a, ok := s.actor()
	if _, advertised := s.tgt.Info.Interfaces[plugins.InterfacePower]; !ok || !advertised {
		t.Skip("power interface not served")
	}
	c := ctx(t)
	refused := func(target plugins.PowerState, timeout time.Duration) {
		t.Helper()
		if err := a.CheckPowerAction(target, timeout); !errors.Is(err, plugins.ErrNotSupported) {
			t.Errorf("check %s (timeout %v): %v, want ErrNotSupported", target, timeout, err)
		}
		err := a.PowerAction(c, s.node, target, timeout)
		s.noSecret(t, err)
		if !errors.Is(err, plugins.ErrNotSupported) {
			t.Errorf("%s (timeout %v): %v, want ErrNotSupported", target, timeout, err)
		}
	}
	if !slices.Contains(s.tgt.Info.Interfaces[plugins.InterfacePower], 2) {
		refused(plugins.PowerOn, time.Minute)
		refused(plugins.SoftPowerOff, 0)
		refused(plugins.SoftRebooting, 0)
		return
	}
	do := func(target plugins.PowerState, timeout time.Duration) {
		t.Helper()
		s.check(t, "check "+string(target), a.CheckPowerAction(target, timeout))
		s.check(t, string(target), a.PowerAction(c, s.node, target, timeout))
		want := target.Final()
		if got, err := s.getPower(c); err != nil || got != want {
			t.Errorf("after %s: power state %q, %v; want %q", target, got, err, want)
		}
	}
	// Later checks (NMI) need the node on: every path ends with it on.
	for _, target := range []plugins.PowerState{plugins.PowerOff, plugins.PowerOn, plugins.Rebooting} {
		do(target, 30*time.Second)
	}
	if err := a.PowerAction(c, s.node, plugins.PowerError, 0); !errors.Is(err, plugins.ErrNotSupported) {
		t.Errorf("power action %q: %v, want ErrNotSupported", plugins.PowerError, err)
	}
	if !s.tgt.Info.Has(plugins.CapabilitySoftPower) {
		refused(plugins.SoftPowerOff, 0)
		refused(plugins.SoftRebooting, 0)
		return
	}
	do(plugins.SoftRebooting, 30*time.Second) // from on
	do(plugins.SoftPowerOff, 30*time.Second)
	do(plugins.SoftPowerOff, 0)               // already off: left alone
	do(plugins.SoftRebooting, 30*time.Second) // from off: powered on
}

func (s *suite) getPower(c context.Context) (plugins.PowerState, error) {
	g, ok := s.tgt.Driver.(plugins.PowerStateGetter)
	if !ok {
		return "", errors.New("no GetPowerState")
	}
	return g.GetPowerState(c, s.node)
}

func (s *suite) management(t *testing.T) {
	d, ok := impl(t, s, plugins.InterfaceManagement, func(d plugins.ManagementInterface) error {
		_, err := d.GetBootDevice(ctx(t), s.node)
		return err
	})
	if !ok {
		t.Skip("management interface not served")
	}
	c := ctx(t)
	devs, err := d.SupportedBootDevices(c, s.node)
	s.check(t, "supported boot devices", err)
	if len(devs) == 0 {
		t.Fatal("no supported boot devices")
	}
	for _, dev := range devs {
		for _, persistent := range []bool{false, true} {
			want := plugins.BootDeviceSetting{Device: dev, Persistent: persistent, Mode: plugins.BootModeUEFI}
			s.check(t, "set boot device", d.SetBootDevice(c, s.node, want))
			got, err := d.GetBootDevice(c, s.node)
			s.check(t, "get boot device", err)
			if got.Device != want.Device || got.Persistent != want.Persistent {
				t.Errorf("boot device: set %+v, got %+v", want, got)
			}
		}
	}
	nmi, hasNMI := s.tgt.Driver.(plugins.NMIInjector)
	switch advertised := s.tgt.Info.Has(plugins.CapabilityNMI); {
	case advertised && hasNMI:
		s.check(t, "inject NMI", nmi.InjectNMI(c, s.node))
	case !advertised && s.tgt.Remote && hasNMI:
		if err := nmi.InjectNMI(c, s.node); !errors.Is(err, plugins.ErrNotSupported) {
			t.Errorf("NMI not advertised, InjectNMI returned %v, want ErrNotSupported", err)
		}
	case advertised && !hasNMI:
		t.Error("nmi advertised but InjectNMI missing")
	}
}

func (s *suite) deploy(t *testing.T) {
	d, ok := impl(t, s, plugins.InterfaceDeploy, func(d plugins.DeployInterface) error {
		return d.PrepareDeploy(ctx(t), s.node)
	})
	if !ok {
		t.Skip("deploy interface not served")
	}
	c := ctx(t)
	s.check(t, "prepare deploy", d.PrepareDeploy(c, s.node))
	s.check(t, "deploy", d.Deploy(c, s.node))
	s.check(t, "tear down", d.TearDown(c, s.node))
	s.check(t, "tear down again (idempotent)", d.TearDown(c, s.node))

	lister, canList := s.tgt.Driver.(plugins.CleanStepLister)
	runner, canRun := s.tgt.Driver.(plugins.CleanStepExecutor)
	if !s.tgt.Info.Has(plugins.CapabilityCleanSteps) {
		if s.tgt.Remote && canList {
			if _, err := lister.ListCleanSteps(c, s.node); !errors.Is(err, plugins.ErrNotSupported) {
				t.Errorf("clean_steps not advertised, ListCleanSteps returned %v, want ErrNotSupported", err)
			}
		}
		return
	}
	if !canList || !canRun {
		t.Fatal("clean_steps advertised but methods missing")
	}
	steps, err := lister.ListCleanSteps(c, s.node)
	s.check(t, "list clean steps", err)
	for _, st := range steps {
		if st.Step == "" || st.Interface == "" {
			t.Errorf("clean step without name or interface: %+v", st)
			continue
		}
		s.check(t, "execute clean step "+st.Step, runner.ExecuteCleanStep(c, s.node, st))
	}
	err = runner.ExecuteCleanStep(c, s.node, plugins.CleanStep{Interface: plugins.InterfaceDeploy, Step: "plugintest_no_such_step"})
	if !errors.Is(err, plugins.ErrNotSupported) {
		t.Errorf("unknown clean step: %v, want ErrNotSupported", err)
	}
	s.noSecret(t, err)
}

// raid reads the node's logical disks (it changes none: creating volumes
// would touch the disks of the machine under test). A machine without
// storage may answer ErrNotSupported; each logical disk read must have
// raid_level and size_gb, as Ironic's raid_config.
func (s *suite) raid(t *testing.T) {
	d, ok := impl(t, s, plugins.InterfaceRAID, func(d plugins.RAIDInterface) error {
		_, err := d.GetRAIDConfiguration(ctx(t), s.node)
		return err
	})
	if !ok {
		t.Skip("raid interface not served")
	}
	disks, err := d.GetRAIDConfiguration(ctx(t), s.node)
	if errors.Is(err, plugins.ErrNotSupported) {
		s.noSecret(t, err)
		t.Skipf("this machine has no RAID: %v", err)
	}
	s.check(t, "get RAID configuration", err)
	for i, ld := range disks {
		if ld["raid_level"] == nil || ld["size_gb"] == nil {
			t.Errorf("logical disk %d lacks raid_level or size_gb: %v", i, ld)
		}
	}
}

func (s *suite) inspect(t *testing.T) {
	d, ok := impl(t, s, plugins.InterfaceInspect, func(d plugins.Inspector) error {
		_, err := d.Inspect(ctx(t), s.node)
		return err
	})
	if !ok {
		t.Skip("inspect interface not served")
	}
	inv, err := d.Inspect(ctx(t), s.node)
	s.check(t, "inspect", err)
	if inv.CPUs <= 0 || inv.CPUArch == "" || inv.MemoryMB <= 0 || inv.LocalGB < 0 {
		t.Errorf("inventory properties incomplete: %+v", inv)
	}
	for _, n := range inv.NICs {
		if !macRE.MatchString(n.MACAddress) {
			t.Errorf("NIC %q: MAC %q is not lower-case colon-separated", n.Name, n.MACAddress)
		}
	}
}

// bios reads the BIOS settings (bios interface version 1): every setting
// is named, once; an Enumeration lists its allowable values and an
// Integer's bounds are ordered. It changes nothing: a BMC's settings are
// not the suite's to change.
func (s *suite) bios(t *testing.T) {
	d, ok := impl(t, s, plugins.InterfaceBIOS, func(d plugins.BIOSInterface) error {
		_, err := d.GetBIOSSettings(ctx(t), s.node)
		return err
	})
	if !ok {
		t.Skip("bios interface not served")
	}
	settings, err := d.GetBIOSSettings(ctx(t), s.node)
	s.check(t, "get BIOS settings", err)
	seen := map[string]bool{}
	for _, st := range settings {
		if st.Name == "" || seen[st.Name] {
			t.Errorf("setting without a name, or twice: %q", st.Name)
		}
		seen[st.Name] = true
		if st.AttributeType == "Enumeration" && len(st.AllowableValues) == 0 {
			t.Errorf("%s: an Enumeration without allowable values", st.Name)
		}
		if st.LowerBound != nil && st.UpperBound != nil && *st.LowerBound > *st.UpperBound {
			t.Errorf("%s: bounds %d..%d", st.Name, *st.LowerBound, *st.UpperBound)
		}
	}
	if len(settings) == 0 {
		t.Error("the bios interface is served but reads no setting")
	}
}

// firmware reads the firmware components (firmware interface version 1):
// each named as Ironic names them ("bios", "bmc", "nic:<id>"), once, with
// a version.
func (s *suite) firmware(t *testing.T) {
	d, ok := impl(t, s, plugins.InterfaceFirmware, func(d plugins.FirmwareInterface) error {
		_, err := d.ListFirmwareComponents(ctx(t), s.node)
		return err
	})
	if !ok {
		t.Skip("firmware interface not served")
	}
	comps, err := d.ListFirmwareComponents(ctx(t), s.node)
	s.check(t, "list firmware components", err)
	seen := map[string]bool{}
	for _, c := range comps {
		if (c.Component != "bios" && c.Component != "bmc" && !strings.HasPrefix(c.Component, "nic:")) || seen[c.Component] || c.CurrentVersion == "" {
			t.Errorf("component %+v: want bios, bmc or nic:<id>, once, with a version", c)
		}
		seen[c.Component] = true
	}
	if len(comps) == 0 {
		t.Error("the firmware interface is served but reads no component")
	}
}

// console starts the node's console on a loopback endpoint (port 0: any)
// and stops it twice. Hardware without a console may answer
// ErrNotSupported (a BMC without SOL or KVM); otherwise the info must be
// complete, carry no secret, and a serial console must accept a TCP
// connection at its URL until stopped.
func (s *suite) console(t *testing.T) {
	d, ok := impl(t, s, plugins.InterfaceConsole, func(d plugins.ConsoleInterface) error {
		_, err := d.StartConsole(ctx(t), s.node, plugins.ConsoleEndpoint{Address: "127.0.0.1"})
		return err
	})
	if !ok {
		t.Skip("console interface not served")
	}
	info, err := d.StartConsole(ctx(t), s.node, plugins.ConsoleEndpoint{Address: "127.0.0.1"})
	if errors.Is(err, plugins.ErrNotSupported) {
		s.noSecret(t, err)
		t.Skipf("the hardware has no console: %v", err)
	}
	s.check(t, "start console", err)
	if err := info.Validate(); err != nil {
		t.Errorf("console info: %v", err)
	}
	if strings.Contains(info.URL, SecretMarker) {
		t.Errorf("console URL leaks a driver_info secret: %s", info.URL)
	}
	if info.Type == plugins.ConsoleSocat {
		addr := strings.TrimPrefix(info.URL, "tcp://")
		c, err := net.DialTimeout("tcp", addr, 10*time.Second)
		if err != nil {
			t.Errorf("serial console URL %s: %v", info.URL, err)
		} else {
			_ = c.Close()
		}
		s.check(t, "stop console", d.StopConsole(ctx(t), s.node))
		if c, err := net.DialTimeout("tcp", addr, 10*time.Second); err == nil {
			_ = c.Close()
			t.Errorf("serial console still listens at %s after StopConsole", info.URL)
		}
	} else {
		s.check(t, "stop console", d.StopConsole(ctx(t), s.node))
	}
	s.check(t, "stop a stopped console", d.StopConsole(ctx(t), s.node))
}
