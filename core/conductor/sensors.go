package conductor

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/rivetmetal/rivet/db"
	"github.com/rivetmetal/rivet/plugins"
)

// SensorConfig is [sensors]: the periodic read of BMC sensors (Ironic's
// [conductor] send_sensor_data*), exposed as Prometheus metrics.
type SensorConfig struct {
	// Enabled is send_sensor_data.
	Enabled bool
	// Interval is send_sensor_data_interval.
	Interval time.Duration
	// Workers bounds the nodes read at once (send_sensor_data_workers).
	Workers int
	// Timeout bounds one node's read (send_sensor_data_wait_timeout).
	Timeout time.Duration
}

// sensorReading is what the collector keeps of one node: its last
// successful read.
type sensorReading struct {
	name    string
	sensors []plugins.Sensor
}

// sensorStore holds the latest readings by node UUID and renders them as
// the baremetal_* families at scrape time.
type sensorStore struct {
	mu    sync.Mutex
	nodes map[string]sensorReading

	temperature, fanRPM, fanPercent, power, voltage, health *prometheus.Desc
}

func newSensorStore() *sensorStore {
	labels := []string{"node_uuid", "node_name", "sensor_id"}
	d := func(name, help string, extra ...string) *prometheus.Desc {
		return prometheus.NewDesc(name, help, append(append([]string{}, labels...), extra...), nil)
	}
	return &sensorStore{nodes: map[string]sensorReading{},
		temperature: d("baremetal_temperature_celsius", "Temperature a node's BMC reports, by sensor."),
		fanRPM:      d("baremetal_fan_speed_rpm", "Fan speed a node's BMC reports in RPM, by fan."),
		fanPercent:  d("baremetal_fan_speed_percent", "Fan speed a node's BMC reports in percent, by fan."),
		power:       d("baremetal_power_watts", "Power a node's BMC reports, by sensor: consumed (power control) and supply outputs."),
		voltage:     d("baremetal_voltage_volts", "Voltage a node's BMC reports, by rail."),
		health: d("baremetal_sensor_status", "Health of each sensor the BMC reports one for: 0 OK, 1 anything else "+
			"(as ironic-prometheus-exporter's *_status).", "type"),
	}
}

// set replaces a node's readings; forget drops those of nodes not in keep.
func (s *sensorStore) set(uuid, name string, sensors []plugins.Sensor) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nodes[uuid] = sensorReading{name: name, sensors: sensors}
}

func (s *sensorStore) drop(uuid string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.nodes, uuid)
}

func (s *sensorStore) forget(keep map[string]bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for uuid := range s.nodes {
		if !keep[uuid] {
			delete(s.nodes, uuid)
		}
	}
}

// Describe implements prometheus.Collector.
func (s *sensorStore) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{s.temperature, s.fanRPM, s.fanPercent, s.power, s.voltage, s.health} {
		ch <- d
	}
}

// Collect implements prometheus.Collector. A sensor name a BMC repeats
// within one type is reported once (its first reading), as a family
// cannot carry two series with equal labels.
func (s *sensorStore) Collect(ch chan<- prometheus.Metric) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for uuid, r := range s.nodes {
		seen := map[string]bool{}
		for _, x := range r.sensors {
			var d *prometheus.Desc
			switch {
			case x.Type == plugins.SensorTemperature:
				d = s.temperature
			case x.Type == plugins.SensorFan && x.Unit == "Percent":
				d = s.fanPercent
			case x.Type == plugins.SensorFan:
				d = s.fanRPM
			case x.Type == plugins.SensorPower:
				d = s.power
			case x.Type == plugins.SensorVoltage:
				d = s.voltage
			default:
				continue
			}
			key := string(x.Type) + "\x00" + x.Name
			if seen[key] {
				continue
			}
			seen[key] = true
			ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, x.Value, uuid, r.name, x.Name)
			if x.Health != "" {
				bad := 0.0
				if x.Health != "OK" {
					bad = 1
				}
				ch <- prometheus.MustNewConstMetric(s.health, prometheus.GaugeValue, bad, uuid, r.name, x.Name, string(x.Type))
			}
		}
	}
}

// sensorLoop reads sensors every Sensors.Interval on workers of its own,
// so a slow BMC never delays power sync or API work.
func (s *Service) sensorLoop() {
	tick := time.NewTicker(s.cfg.Sensors.Interval)
	defer tick.Stop()
	for {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			select {
			case <-s.stopBg:
				cancel()
			case <-done:
			}
		}()
		s.collectSensors(ctx)
		close(done)
		cancel()
		select {
		case <-s.stopBg:
			return
		case <-tick.C:
		}
	}
}

// collectSensors reads the sensors of every node this conductor manages
// that is not in maintenance and that no task holds, at most
// Sensors.Workers at once, and returns how many reads succeeded.
func (s *Service) collectSensors(ctx context.Context) int {
	keep := map[string]bool{}
	var todo []string
	err := s.ownedNodes(ctx, func(n *db.PowerSyncNode) {
		if n.Maintenance || n.Reservation != nil {
			return
		}
		keep[n.UUID] = true
		todo = append(todo, n.UUID)
	})
	if err != nil {
		s.log.Warn("sensor data: listing this conductor's nodes failed", "error", err)
		return 0
	}
	s.sensors.forget(keep)
	sem := make(chan struct{}, max(s.cfg.Sensors.Workers, 1))
	var wg sync.WaitGroup
	var mu sync.Mutex
	ok := 0
	for _, uuid := range todo {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			wg.Wait()
			return ok
		}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			if s.readSensors(ctx, uuid) {
				mu.Lock()
				ok++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return ok
}

// readSensors reads one node's sensors into the store; a failed read
// drops its readings rather than show stale ones.
func (s *Service) readSensors(ctx context.Context, uuid string) bool {
	n, err := s.store.GetNode(ctx, uuid)
	if err != nil {
		s.sensors.drop(uuid)
		return false
	}
	hw, err := s.hardware(n)
	if err != nil {
		s.sensors.drop(uuid)
		return false
	}
	reader, ok := hw.(plugins.SensorReader)
	if !ok {
		s.sensorsUnsupported(n.Driver, errors.New("the driver has no sensor support"))
		s.sensors.drop(uuid)
		return false
	}
	if s.cfg.Sensors.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, s.cfg.Sensors.Timeout)
		defer cancel()
	}
	sensors, err := reader.GetSensorData(ctx, pluginNode(n))
	switch {
	case errors.Is(err, plugins.ErrNotSupported):
		s.sensorsUnsupported(n.Driver, err)
		s.sensors.drop(uuid)
		return false
	case err != nil:
		s.metrics.sensorCollections.WithLabelValues("error").Inc()
		s.log.Debug("sensor data: read failed", "node", n.UUID, "node_name", deref(n.Name), "error", driverError(n.Driver, bmcOf(n), "get sensor data", err))
		s.sensors.drop(uuid)
		return false
	}
	s.metrics.sensorCollections.WithLabelValues("ok").Inc()
	s.sensors.set(uuid, deref(n.Name), sensors)
	return true
}

// sensorsUnsupported counts a node whose driver cannot read sensors and
// logs it once per hardware type.
func (s *Service) sensorsUnsupported(hw string, err error) {
	s.metrics.sensorCollections.WithLabelValues("unsupported").Inc()
	if _, logged := s.sensorsNoted.LoadOrStore(hw, true); !logged {
		s.log.Info("sensor data: the driver of this hardware type cannot read sensors (a plugin built "+
			"before the Sensors service, or a driver without them); its nodes have no sensor metrics",
			"hardware_type", hw, "reason", err)
	}
}
