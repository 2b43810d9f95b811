package config

import "time"

// MetricsOpts holds the [metrics] section. Each field is declared, with its
// default, rules and help, in metricsSection.
type MetricsOpts struct {
	APIListen       string
	ConductorListen string
	AllowRemote     bool
}

// Default ports of the metrics listeners. 9608 is the port the Prometheus
// default-port allocations list gives ironic-prometheus-exporter, the
// exporter Ironic deployments scrape; the conductor takes the next one so
// both services can run on one host with one configuration file.
const (
	DefaultAPIMetricsPort       = "9608"
	DefaultConductorMetricsPort = "9609"
)

func metricsSection() section {
	return section{name: "metrics", help: "Prometheus metrics: each service serves GET /metrics on a listener of its own, " +
		"without authentication, as exporters are (docs/admin/metrics.md lists the families).", options: []*Option{
		strOpt("api_listen", "127.0.0.1:"+DefaultAPIMetricsPort, func(c *Config) *string { return &c.Metrics.APIListen },
			"host:port on which the API service serves its metrics (request latency by route and status). "+
				"The listener has no authentication; a non-loopback address also needs allow_remote = true. "+
				"Empty disables it. The REST API's own /metrics, behind its authentication, is served "+
				"either way.").check(checkHostPort),
		strOpt("conductor_listen", "127.0.0.1:"+DefaultConductorMetricsPort, func(c *Config) *string { return &c.Metrics.ConductorListen },
			"host:port on which the conductor serves its metrics (nodes per state, power sync, BMC "+
				"calls, plugins, takeovers, provisioning, RPC, sensors). The listener has no "+
				"authentication; a non-loopback address also needs allow_remote = true. Empty disables it.").
			check(checkHostPort),
		boolOpt("allow_remote", false, func(c *Config) *bool { return &c.Metrics.AllowRemote },
			"Allow api_listen and conductor_listen on a non-loopback address (0.0.0.0, a host name, "+
				"an interface address). The metrics carry no secrets but name nodes (sensor readings) "+
				"and reveal load: expose them only to the monitoring network. Without it a service "+
				"refuses to start with such an address."),
	}}
}

// SensorOpts holds the [sensors] section.
type SensorOpts struct {
	SendSensorData         bool
	SendSensorDataInterval time.Duration
	SendSensorDataWorkers  int
	SendSensorDataTimeout  time.Duration
}

func sensorsSection() section {
	sec := int64(time.Second)
	return section{name: "sensors", help: "Sensor data (temperatures, fans, power) the conductor reads from its nodes' BMCs " +
		"and exposes as Prometheus metrics on [metrics] conductor_listen. Ironic names these options " +
		"[conductor] send_sensor_data*.", options: []*Option{
		boolOpt("send_sensor_data", false, func(c *Config) *bool { return &c.Sensors.SendSensorData },
			"Read sensor data from every node this conductor manages, every send_sensor_data_interval, "+
				"with a driver whose plugin supports it (redfish, ipmi). Nodes in maintenance and nodes a task "+
				"holds (a deploy, a power action) are skipped. It runs on workers of its own and never delays "+
				"the power-state sync."),
		durOpt("send_sensor_data_interval", 600*time.Second, func(c *Config) *time.Duration { return &c.Sensors.SendSensorDataInterval },
			"Interval between two sensor data collections.").atLeast(sec),
		intOpt("send_sensor_data_workers", 4, func(c *Config) *int { return &c.Sensors.SendSensorDataWorkers },
			"Most nodes whose sensors are read at once.").between(1, 64),
		durOpt("send_sensor_data_wait_timeout", 300*time.Second, func(c *Config) *time.Duration { return &c.Sensors.SendSensorDataTimeout },
			"Longest one node's sensor read may take; a slower BMC is given up on until the next collection.").atLeast(sec),
	}}
}
