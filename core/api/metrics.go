package api

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// metrics are the REST API's Prometheus collectors, labelled by route (the
// mux pattern, never the raw path, so node names do not explode the label
// space) and status.
type metrics struct {
	reg      *prometheus.Registry
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
}

func newMetrics(reg *prometheus.Registry) (*metrics, error) {
	m := &metrics{
		reg: reg,
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "rivet_api_requests_total",
			Help: "REST API requests by method, route and HTTP status.",
		}, []string{"method", "route", "status"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "rivet_api_request_duration_seconds",
			Help:    "REST API request latency by method, route and HTTP status.",
			Buckets: prometheus.DefBuckets,
		}, []string{"method", "route", "status"}),
	}
	for _, c := range []prometheus.Collector{m.requests, m.latency} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

func (m *metrics) observe(method, route string, status int, d time.Duration) {
	if route == "" {
		route = "other"
	}
	code := strconv.Itoa(status)
	m.requests.WithLabelValues(method, route, code).Inc()
	m.latency.WithLabelValues(method, route, code).Observe(d.Seconds())
}

func (m *metrics) handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}
