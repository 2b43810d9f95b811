package conductor

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"

	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/drivers/fake"
	"github.com/rivetmetal/rivet/plugins"
)

// sensing adds sensors to the hooked fake.
type sensing struct {
	*hookedFake
	reads atomic.Int32
	fail  atomic.Bool
}

func (s *sensing) GetSensorData(ctx context.Context, n plugins.Node) ([]plugins.Sensor, error) {
	s.reads.Add(1)
	if s.fail.Load() {
		return nil, errors.New("BMC timed out")
	}
	return []plugins.Sensor{
		{Type: plugins.SensorTemperature, Name: "CPU1 Temp", Value: 51.5, Unit: "Cel", Health: "OK"},
		{Type: plugins.SensorFan, Name: "Fan1", Value: 6000, Unit: "RPM", Health: "Warning"},
		{Type: plugins.SensorFan, Name: "Fan2", Value: 40, Unit: "Percent"},
		{Type: plugins.SensorPower, Name: "System Power Control", Value: 212.5, Unit: "W"},
		{Type: plugins.SensorVoltage, Name: "12V Rail", Value: 12.02, Unit: "V"},
	}, nil
}

// scrape renders the collectors as the text exposition format.
func scrape(t *testing.T, cs ...prometheus.Collector) string {
	t.Helper()
	reg := prometheus.NewRegistry()
	for _, c := range cs {
		reg.MustRegister(c)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, mf := range mfs {
		if _, err := expfmt.MetricFamilyToText(&b, mf); err != nil {
			t.Fatal(err)
		}
	}
	return b.String()
}

// Sensor data is read from every node the conductor manages whose driver
// reads sensors, except nodes in maintenance, and exposed per node; a
// driver without sensors is logged once and counted, and a failed read
// drops the node's readings rather than show stale ones.
func TestSensorCollection(t *testing.T) {
	var drv *sensing
	h := startHarness(t, nil, "cond-a", func(c *Config) {
		c.Sensors = SensorConfig{Enabled: false, Workers: 2}
	}, func(hw *hookedFake) StaticDrivers {
		drv = &sensing{hookedFake: hw}
		return StaticDrivers{fake.HardwareType: drv, "plain-hardware": hw}
	})
	ctx := context.Background()
	a, b := h.enroll("rack1-a"), h.enroll("rack1-b")
	plainName := "plain-1"
	if _, err := h.api.CreateNode(ctx, &objects.Node{Driver: "plain-hardware", Name: &plainName}); err != nil {
		t.Fatal(err)
	}
	b.Maintenance = true
	if err := h.store.Save(ctx, b); err != nil {
		t.Fatal(err)
	}
	if got := h.svc.collectSensors(ctx); got != 1 {
		t.Fatalf("collectSensors read %d nodes, want 1 (b is in maintenance, plain-1's driver has no sensors)", got)
	}
	out := scrape(t, h.svc.sensors, h.svc.metrics.sensorCollections)
	for _, want := range []string{
		`baremetal_temperature_celsius{node_name="rack1-a",node_uuid="` + a.UUID + `",sensor_id="CPU1 Temp"} 51.5`,
		`baremetal_fan_speed_rpm{node_name="rack1-a",node_uuid="` + a.UUID + `",sensor_id="Fan1"} 6000`,
		`baremetal_fan_speed_percent{node_name="rack1-a",node_uuid="` + a.UUID + `",sensor_id="Fan2"} 40`,
		`baremetal_power_watts{node_name="rack1-a",node_uuid="` + a.UUID + `",sensor_id="System Power Control"} 212.5`,
		`baremetal_voltage_volts{node_name="rack1-a",node_uuid="` + a.UUID + `",sensor_id="12V Rail"} 12.02`,
		`baremetal_sensor_status{node_name="rack1-a",node_uuid="` + a.UUID + `",sensor_id="CPU1 Temp",type="temperature"} 0`,
		`baremetal_sensor_status{node_name="rack1-a",node_uuid="` + a.UUID + `",sensor_id="Fan1",type="fan"} 1`,
		`rivet_conductor_sensor_reads_total{outcome="ok"} 1`,
		`rivet_conductor_sensor_reads_total{outcome="unsupported"} 1`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("scrape lacks %s\n%s", want, out)
		}
	}
	if strings.Contains(out, b.UUID) {
		t.Errorf("the node in maintenance has readings:\n%s", out)
	}

	drv.fail.Store(true)
	h.svc.collectSensors(ctx)
	out = scrape(t, h.svc.sensors, h.svc.metrics.sensorCollections)
	if strings.Contains(out, a.UUID) || !strings.Contains(out, `rivet_conductor_sensor_reads_total{outcome="error"} 1`) {
		t.Errorf("after a failed read:\n%s", out)
	}
}
