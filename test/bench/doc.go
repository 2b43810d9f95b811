// Command bench measures an Ironic-compatible REST API (Rivet or Ironic
// itself) with the workloads of issue 11, so both can be compared on the
// same machine:
//
//	go run ./test/bench --url http://127.0.0.1:6385 [--workloads enroll,get,list,detail,power,lifecycle] [--json]
//
// Workloads: enroll (POST nodes at --concurrency), get (GET one node at
// --get-concurrency for --duration), list (GET /v1/nodes?limit=1000),
// detail (GET /v1/nodes/detail?limit=100 at --get-concurrency), power (power
// on --power-nodes nodes and wait until each reports it), lifecycle
// (manage → provide → active → deleted on --lifecycle-nodes nodes, waiting
// for each state). Every figure is measured, never extrapolated: rates,
// p50 and p99 latencies, and elapsed times. Nodes it creates are deleted at
// the end unless --keep is given. It only talks to the URL it is given.
package main
