// Package metrics proves the Prometheus metrics end to end: an API and a
// conductor with real plugin processes (fake-hardware, and redfish against
// the drivers/redfish/sim BMC) serve their registries on their own
// listeners (core/metrics); the test drives nodes through a deploy, power
// on and off and failures, scrapes both listeners over HTTP and checks
// every documented family with its labels. The Grafana dashboard
// (docs/admin/grafana/rivet.json) and docs/admin/metrics.md are checked
// against the same scrape: every metric they name is exported, and every
// exported rivet_/baremetal_ family is documented.
//
// Rules: nothing asserts timing; waits poll with a generous deadline.
package metrics
