package ipmi

import (
	"context"
	"errors"
	"net"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bougou/go-ipmi/pkg/bmc"
	"github.com/bougou/go-ipmi/pkg/clock"
	"github.com/bougou/go-ipmi/pkg/command/chassis"
	"github.com/bougou/go-ipmi/pkg/hal"
	"github.com/bougou/go-ipmi/pkg/hal/mock"
	"github.com/bougou/go-ipmi/pkg/handlers"
	"github.com/bougou/go-ipmi/pkg/server"
	"github.com/bougou/go-ipmi/pkg/transport/udp"
	"github.com/bougou/go-ipmi/pkg/types"

	"github.com/rivetmetal/rivet/plugins"
)

// Test credentials for the in-process BMC. The password is distinctive so
// that a leak into an error or a log line is found by a plain search.
const (
	testUser     = "admin"
	testPassword = "Zq7-ipmi-pw-Kx9"
)

// chassisSim makes go-ipmi's mock chassis behave like hardware: power
// cycle and hard reset leave the node on, soft shutdown turns it off.
type chassisSim struct {
	*mock.Chassis
	nmis atomic.Int32
	// identify is the last Chassis Identify's seconds, plus one (0: none).
	identify atomic.Int32
	// softDelay is how long the simulated OS takes to act on a soft
	// shutdown; negative: it ignores the request.
	softDelay time.Duration
	// pollDelay, when set, delays the answer to the n-th power state
	// read (from 1), as a BMC slow to answer does.
	pollDelay func(n int) time.Duration
	polls     atomic.Int32
	// nmiCC, when set, is the completion code the diagnostic interrupt
	// gets instead of an NMI.
	nmiCC types.CompletionCode
}

func (c *chassisSim) PowerState(ctx context.Context) (bool, error) {
	if c.pollDelay != nil {
		time.Sleep(c.pollDelay(int(c.polls.Add(1))))
	}
	return c.Chassis.PowerState(ctx)
}

// softShutdown plays the OS answering an ACPI power button press.
func (c *chassisSim) softShutdown(ctx context.Context) error {
	switch {
	case c.softDelay < 0:
		return nil
	case c.softDelay == 0:
		return c.SetPower(ctx, false)
	}
	time.AfterFunc(c.softDelay, func() { _ = c.SetPower(context.Background(), false) })
	return nil
}

func (c *chassisSim) PowerCycle(ctx context.Context) error {
	_ = c.Chassis.PowerCycle(ctx)
	return c.SetPower(ctx, true)
}

func (c *chassisSim) ColdReset(ctx context.Context) error {
	_ = c.Chassis.ColdReset(ctx)
	return c.SetPower(ctx, true)
}

func (c *chassisSim) on(t *testing.T) bool {
	t.Helper()
	on, _ := c.PowerState(context.Background())
	return on
}

type halSim struct {
	*mock.HAL
	chassis *chassisSim
}

func (h halSim) Chassis() hal.ChassisHAL { return h.chassis }

// testBMC is go-ipmi's reference BMC serving one chassis on loopback.
type testBMC struct {
	host    string
	port    int
	chassis *chassisSim
	stop    func()
}

// bmcConfig tunes startBMC.
type bmcConfig struct {
	port  int  // 0: any free port
	noNMI bool // answer the diagnostic interrupt as the stock handler does (cc 0xC9)
	// maxPriv caps the test user's privilege (default administrator).
	maxPriv bmc.PrivilegeLevel
	chasis  *chassisSim
	// console is the host's serial port behind SOL (nil: none).
	console *mock.Console
}

// startBMC starts an in-process BMC accepting testUser/testPassword; it
// stops when the test ends (or with stop).
func startBMC(t *testing.T, cfg bmcConfig) *testBMC {
	t.Helper()
	ch := cfg.chasis
	if ch == nil {
		ch = &chassisSim{Chassis: &mock.Chassis{}}
	}
	m := mock.New()
	if cfg.console != nil {
		m.SetConsole(cfg.console)
	}
	b := bmc.New(bmc.DeviceInfo{DeviceID: 32, IPMIVersion: 0x20, ManufacturerID: 0x157, ProductID: 1},
		[16]byte{'r', 'i', 'v', 'e', 't'}, halSim{HAL: m, chassis: ch}, bmc.WithClock(clock.Real))
	u, err := b.Users.Add(2, testUser)
	if err != nil {
		t.Fatal(err)
	}
	u.SetPassword([]byte(testPassword))
	u.Enabled = true
	maxPriv := cfg.maxPriv
	if maxPriv == 0 {
		maxPriv = bmc.PrivilegeLevelAdministrator
	}
	u.ChannelAccess[1] = bmc.UserChannelAccess{MaxPrivilege: maxPriv, Enabled: true}
	conn, err := udp.Listen(net.JoinHostPort("127.0.0.1", strconv.Itoa(cfg.port)))
	if err != nil {
		t.Fatal(err)
	}
	reg := handlers.NewRegistry()
	handlers.RegisterAllHandlers(reg)
	if !cfg.noNMI {
		reg.RegisterFunc(types.CommandChassisControl, chassisControl)
	}
	srv := server.NewServer(b, conn, server.WithHandlerRegistry(reg))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Serve(ctx) }()
	var stopped atomic.Bool
	stop := func() {
		if stopped.Swap(true) {
			return
		}
		cancel()
		_ = srv.Close()
		_ = conn.Close()
		<-done
	}
	t.Cleanup(stop)
	port := conn.LocalAddr().(*net.UDPAddr).Port
	return &testBMC{host: "127.0.0.1", port: port, chassis: ch, stop: stop}
}

// chassisControl is Chassis Control with the diagnostic interrupt
// implemented (counted), which the stock handler refuses.
func chassisControl(ctx context.Context, hctx *handlers.HandlerContext, req []byte) ([]byte, types.CompletionCode, error) {
	var r chassis.ChassisControlRequest
	if err := r.Unpack(req); err != nil {
		return nil, types.CodeRequestDataTruncated, nil
	}
	ch := hctx.BMC.HAL().Chassis().(*chassisSim)
	var err error
	switch r.ChassisControl {
	case chassis.ChassisControlPowerDown:
		err = ch.SetPower(ctx, false)
	case chassis.ChassisControlSoftShutdown:
		err = ch.softShutdown(ctx)
	case chassis.ChassisControlPowerUp:
		err = ch.SetPower(ctx, true)
	case chassis.ChassisControlPowerCycle:
		err = ch.PowerCycle(ctx)
	case chassis.ChassisControlHardReset:
		err = ch.ColdReset(ctx)
	case chassis.ChassisControlDiagnosticInterrupt:
		if ch.nmiCC != 0 {
			return nil, ch.nmiCC, nil
		}
		ch.nmis.Add(1)
	default:
		return nil, types.CodeParameterOutOfRange, nil
	}
	if err != nil {
		return nil, types.CodeUnspecifiedError, nil
	}
	return nil, types.CodeOK, nil
}

// restart stops the BMC and starts a new one (no sessions) on the same
// port with the same chassis, as a BMC reboot looks to a client.
func (b *testBMC) restart(t *testing.T) {
	t.Helper()
	b.stop()
	nb := startBMC(t, bmcConfig{port: b.port, chasis: b.chassis}) // UDP ports rebind at once
	b.stop = nb.stop
}

// node is a node whose driver_info reaches b with fast test settings.
func (b *testBMC) node(extra plugins.DriverInfo) plugins.Node {
	info := plugins.DriverInfo{
		KeyAddress: b.host, KeyPort: float64(b.port), KeyUsername: testUser, KeyPassword: testPassword,
		KeyTimeout: 0.5, KeyRetries: 1, KeyMinCommandInterval: 0.001, KeyPowerStateChangeTimeout: 5,
	}
	for k, v := range extra {
		info[k] = v
	}
	return plugins.Node{UUID: "4a7d1c1e-6a0e-4f5e-9b3c-1d2e3f405060", HardwareType: HardwareType, DriverInfo: info,
		InstanceInfo: map[string]any{InstanceKernel: "http://images/vmlinuz", InstanceRamdisk: "http://images/initrd"}}
}

// newDriver returns a driver closed (and checked closed) when t ends.
func newDriver(t *testing.T, opts Options) *Driver {
	t.Helper()
	d := New(nil, opts)
	t.Cleanup(func() {
		if err := d.Close(context.Background()); err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("close: %v", err)
		}
	})
	return d
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func itoa(i int) string { return strconv.Itoa(i) }
