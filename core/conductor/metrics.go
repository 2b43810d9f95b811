package conductor

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/rivetmetal/rivet/core/rpc"
	"github.com/rivetmetal/rivet/core/states"
	"github.com/rivetmetal/rivet/db"
	"github.com/rivetmetal/rivet/plugins"
)

// Metrics are a conductor's Prometheus collectors (docs/admin/metrics.md).
// Labels are bounded sets (states, drivers, calls, methods): no node label,
// except on the sensor readings (sensors.go), which are per node by nature.
// Build one with NewMetrics before the plugin host, whose calls it observes
// (it implements host.Observer), and hand it to the conductor in
// Deps.Metrics.
type Metrics struct {
	reg prometheus.Registerer

	powerSyncCycle    prometheus.Histogram
	powerSyncFailures prometheus.Counter
	powerSyncChanges  prometheus.Counter
	bmcCalls          *prometheus.HistogramVec
	bmcErrors         *prometheus.CounterVec
	pluginRestarts    *prometheus.CounterVec
	takeovers         prometheus.Counter
	provision         *prometheus.HistogramVec
	rpcRequests       *prometheus.HistogramVec
	sensorCollections *prometheus.CounterVec

	// started maps a node UUID to the time its deploy, clean or inspect
	// began on this conductor, for provision's durations.
	started sync.Map
}

// bmcBuckets span a fast BMC answer to a power action that waits for the
// node (seconds).
var bmcBuckets = []float64{.01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120, 300}

// provisionBuckets span a fake driver's deploy to a slow disk wipe
// (seconds).
var provisionBuckets = []float64{1, 5, 15, 30, 60, 120, 300, 600, 1200, 1800, 3600, 7200, 14400}

// NewMetrics registers a conductor's collectors in reg.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{reg: reg,
		powerSyncCycle: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "rivet_conductor_power_sync_cycle_duration_seconds",
			Help: "Duration of power-state sync cycles.", Buckets: prometheus.ExponentialBuckets(.1, 2, 14)}),
		powerSyncFailures: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "rivet_conductor_power_sync_failures_total",
			Help: "Power-state sync probes that failed (BMC error, timeout, empty answer)."}),
		powerSyncChanges: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "rivet_conductor_power_sync_changes_total",
			Help: "Power-state sync probes that found a power state other than the recorded one."}),
		bmcCalls: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "rivet_conductor_bmc_call_duration_seconds",
			Help: "Latency of driver calls (through the plugin to the BMC) by hardware type and call.", Buckets: bmcBuckets},
			[]string{"driver", "call"}),
		bmcErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "rivet_conductor_bmc_call_errors_total",
			Help: "Driver calls that failed, by hardware type and call (unsupported calls aside)."},
			[]string{"driver", "call"}),
		pluginRestarts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "rivet_conductor_plugin_restarts_total",
			Help: "Driver plugin processes started again after the first: after a crash, or a replaced binary."},
			[]string{"driver"}),
		takeovers: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "rivet_conductor_lease_takeovers_total",
			Help: "Node leases this conductor took over from a conductor no longer alive."}),
		provision: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "rivet_conductor_provision_duration_seconds",
			Help: "Duration of deploys, cleanings and inspections that ended on this conductor, by outcome.", Buckets: provisionBuckets},
			[]string{"operation", "outcome"}),
		rpcRequests: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "rivet_conductor_rpc_request_duration_seconds",
			Help: "Latency of the conductor's RPC requests (the handler's own time for a cast) by method and outcome.", Buckets: prometheus.DefBuckets},
			[]string{"method", "outcome"}),
		sensorCollections: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "rivet_conductor_sensor_reads_total",
			Help: "Per-node sensor reads by outcome (ok, error, unsupported)."},
			[]string{"outcome"}),
	}
	for _, c := range []prometheus.Collector{m.powerSyncCycle, m.powerSyncFailures, m.powerSyncChanges, m.bmcCalls,
		m.bmcErrors, m.pluginRestarts, m.takeovers, m.provision, m.rpcRequests, m.sensorCollections} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// DriverCall implements host.Observer: one call into a driver plugin.
func (m *Metrics) DriverCall(hardwareType, call string, d time.Duration, err error) {
	m.bmcCalls.WithLabelValues(hardwareType, call).Observe(d.Seconds())
	if err != nil && !errors.Is(err, plugins.ErrNotSupported) && !errors.Is(err, context.Canceled) {
		m.bmcErrors.WithLabelValues(hardwareType, call).Inc()
	}
}

// pluginSeen starts a driver's restart count at 0, so the series exists
// (and rate() works) before its first restart.
func (m *Metrics) pluginSeen(driver string) { m.pluginRestarts.WithLabelValues(driver).Add(0) }

// PluginRestarted implements host.Observer.
func (m *Metrics) PluginRestarted(driver string) { m.pluginRestarts.WithLabelValues(driver).Inc() }

// rpcDone observes one RPC request.
func (m *Metrics) rpcDone(method string, d time.Duration, err error) {
	outcome := "ok"
	if err != nil {
		outcome = "error"
	}
	m.rpcRequests.WithLabelValues(method, outcome).Observe(d.Seconds())
}

// operationOf names the provisioning operation a node in st is doing.
func operationOf(st string) string {
	switch states.State(st) {
	case states.Deploying, states.DeployWait:
		return "deploy"
	case states.Cleaning, states.CleanWait:
		return "clean"
	case states.Inspecting, states.InspectWait:
		return "inspect"
	}
	return ""
}

// failedState is the state an operation fails into.
var failedState = map[string]states.State{"deploy": states.DeployFailed, "clean": states.CleanFailed, "inspect": states.InspectFailed}

// provisionSaved observes a saved provision state transition: the start of
// a deploy, clean or inspect, or its end (failure when the node went to the
// operation's failed state, success otherwise). An operation another
// conductor began (before a takeover) has no start here and is not
// observed.
func (m *Metrics) provisionSaved(uuid, before, now string) {
	if m == nil || before == now {
		return
	}
	bop, nop := operationOf(before), operationOf(now)
	if bop == nop {
		return
	}
	if bop != "" {
		if v, ok := m.started.LoadAndDelete(uuid); ok {
			outcome := "success"
			if states.State(now) == failedState[bop] {
				outcome = "failure"
			}
			m.provision.WithLabelValues(bop, outcome).Observe(time.Since(v.(time.Time)).Seconds())
		}
	}
	if nop != "" {
		m.started.Store(uuid, time.Now())
	}
}

// nodeCollector reports the nodes this conductor manages (the hash ring
// maps to it) by provision state, power state and maintenance, read at
// scrape time.
type nodeCollector struct {
	s    *Service
	desc *prometheus.Desc
}

func newNodeCollector(s *Service) nodeCollector {
	return nodeCollector{s: s, desc: prometheus.NewDesc("rivet_conductor_nodes",
		"Nodes this conductor manages, by provision state, power state and maintenance.",
		[]string{"provision_state", "power_state", "maintenance"}, nil)}
}

// Describe implements prometheus.Collector.
func (c nodeCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

// Collect implements prometheus.Collector.
func (c nodeCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	type key struct{ prov, power, maint string }
	counts := map[key]int{}
	err := c.s.ownedNodes(ctx, func(n *db.PowerSyncNode) {
		counts[key{deref(n.ProvisionState), noneIfEmpty(deref(n.PowerState)), strconv.FormatBool(n.Maintenance)}]++
	})
	if err != nil {
		c.s.log.Warn("metrics: listing this conductor's nodes failed", "error", err)
		ch <- prometheus.NewInvalidMetric(c.desc, err)
		return
	}
	for k, v := range counts {
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, float64(v), k.prov, k.power, k.maint)
	}
}

// rpcObserver adapts Metrics to rpc.Server's observer.
func (m *Metrics) rpcObserver() rpc.Observer {
	return func(method string, d time.Duration, err error) { m.rpcDone(method, d, err) }
}
