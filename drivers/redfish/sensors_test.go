package redfish_test

import (
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rivetmetal/rivet/drivers/redfish"
	"github.com/rivetmetal/rivet/drivers/redfish/sim"
	"github.com/rivetmetal/rivet/plugins"
	"github.com/rivetmetal/rivet/test/testenv"
)

func sensorsByName(ss []plugins.Sensor) map[string]plugins.Sensor {
	out := map[string]plugins.Sensor{}
	for _, s := range ss {
		out[string(s.Type)+"/"+s.Name] = s
	}
	return out
}

// The simulator's chassis Thermal and Power resources read as sensors:
// temperatures and fans rise when the node is powered on, power consumed
// too, and readings drift with the BMC's clock.
func TestSensorDataFromSim(t *testing.T) {
	var mu sync.Mutex
	clock := time.Date(2027, 1, 17, 9, 0, 0, 0, time.UTC)
	now := func() time.Time { mu.Lock(); defer mu.Unlock(); return clock }
	b := startSim(t, sim.Options{Now: now})
	d := newDriver(t, testOptions())
	n := node(b, "node-0")
	read := func() map[string]plugins.Sensor {
		t.Helper()
		ss, err := d.GetSensorData(ctx(t), n)
		must(t, "get sensor data", err)
		return sensorsByName(ss)
	}
	off := read()
	for _, k := range []string{"temperature/CPU1 Temp", "temperature/Inlet Temp", "fan/Fan1", "power/System Power Control",
		"power/PSU1 Output", "voltage/12V Rail"} {
		if _, ok := off[k]; !ok {
			t.Fatalf("no %s in %v", k, off)
		}
	}
	if s := off["temperature/CPU1 Temp"]; s.Unit != "Cel" || s.Health != "OK" {
		t.Errorf("CPU1 Temp %+v", s)
	}
	if s := off["fan/Fan1"]; s.Unit != "RPM" {
		t.Errorf("Fan1 %+v", s)
	}
	if v := off["voltage/12V Rail"].Value; v < 11.9 || v > 12.1 {
		t.Errorf("12V rail reads %v", v)
	}
	must(t, "power on", d.SetPowerState(ctx(t), n, plugins.PowerOn))
	on := read()
	for _, k := range []string{"temperature/CPU1 Temp", "fan/Fan1", "power/System Power Control"} {
		if on[k].Value <= off[k].Value {
			t.Errorf("%s: %v powered on, not above %v powered off", k, on[k].Value, off[k].Value)
		}
	}
	mu.Lock()
	clock = clock.Add(75 * time.Second)
	mu.Unlock()
	if later := read(); later["power/System Power Control"].Value == on["power/System Power Control"].Value {
		t.Errorf("power consumed unchanged after 75s: %v", later["power/System Power Control"].Value)
	}
}

// A DMTF mockup's Thermal and Power read the same way (the mockups are
// static, so only their presence and values are checked).
func TestSensorDataFromMockup(t *testing.T) {
	dir := testenv.RequireRedfishMockups(t)
	m := startMockup(t, filepath.Join(dir, "public-rackmount1"))
	systems := m.systems()
	if len(systems) == 0 {
		t.Fatal("mockup has no system")
	}
	n := plugins.Node{UUID: "uuid-sensors", HardwareType: redfish.HardwareType, DriverInfo: plugins.DriverInfo{
		redfish.KeyAddress: m.URL, redfish.KeySystemID: systems[0], redfish.KeyUsername: "admin", redfish.KeyPassword: password}}
	d := newDriver(t, testOptions())
	ss, err := d.GetSensorData(ctx(t), n)
	must(t, "get sensor data", err)
	kinds := map[plugins.SensorType]int{}
	for _, s := range ss {
		kinds[s.Type]++
		if s.Name == "" {
			t.Errorf("unnamed sensor %+v", s)
		}
	}
	if kinds[plugins.SensorTemperature] == 0 || kinds[plugins.SensorFan] == 0 || kinds[plugins.SensorPower] == 0 {
		t.Fatalf("sensors by type %v from %v", kinds, ss)
	}
}

// A chassis of the newer schema, linking neither Thermal nor Power, is
// read through its Sensors collection (the mockup's chassis with those
// two links removed).
func TestSensorDataFromSensorsCollection(t *testing.T) {
	dir := testenv.RequireRedfishMockups(t)
	m := startMockup(t, filepath.Join(dir, "public-rackmount1"))
	m.mu.Lock()
	for path, res := range m.res {
		if strings.HasPrefix(path, "/redfish/v1/Chassis/") && res["Sensors"] != nil {
			delete(res, "Thermal")
			delete(res, "Power")
		}
	}
	m.mu.Unlock()
	systems := m.systems()
	n := plugins.Node{UUID: "uuid-sensors", HardwareType: redfish.HardwareType, DriverInfo: plugins.DriverInfo{
		redfish.KeyAddress: m.URL, redfish.KeySystemID: systems[0], redfish.KeyUsername: "admin", redfish.KeyPassword: password}}
	d := newDriver(t, testOptions())
	ss, err := d.GetSensorData(ctx(t), n)
	must(t, "get sensor data", err)
	kinds := map[plugins.SensorType]int{}
	for _, s := range ss {
		kinds[s.Type]++
	}
	if kinds[plugins.SensorTemperature] == 0 || kinds[plugins.SensorPower] == 0 || kinds[plugins.SensorVoltage] == 0 {
		t.Fatalf("sensors by type %v from %v", kinds, ss)
	}
	if got := sensorsByName(ss)["power/Power reading for the Chassis"]; got.Unit != "W" || got.Value <= 0 {
		t.Errorf("chassis power %+v", got)
	}
}
