// Command bench measures an Ironic-compatible REST API (Rivet or Ironic
// itself) with the workloads of issue 11, so both can be compared on the
// same machine:
//
//	go run ./test/bench --url http://127.0.0.1:6385 [--workloads enroll,get,list,detail,power,lifecycle] [--json]
//
// Workloads: enroll (POST nodes at --concurrency), get (GET one node at
// --get-concurrency for --duration), list (GET /v1/nodes?limit=1000, or
// all the enrolled nodes when fewer), detail (GET /v1/nodes/detail?limit=100
// at --get-concurrency), power (power on --power-nodes nodes and wait until
// each reports it), lifecycle (manage → provide → active → deleted on
// --lifecycle-nodes nodes, waiting for each state). Every figure is
// measured, never extrapolated: rates, p50 and p99 latencies, and elapsed
// times. Nodes it creates are deleted at the end unless --keep is given. It
// only talks to the URL it is given.
//
// Every request goes through Go's net/http client, one transport with
// keep-alive connections (up to 256 idle ones to the API, so each worker
// finds one). Enroll and the read workloads (get, list, detail) keep what
// a request costs the bench beyond net/http out of the loop: headers built
// once, each worker's response buffer reused, enroll's POST body the
// template marshalled once with each node's name spliced in (the per-node
// name replaces a name of the template's), and only the created node's
// uuid read from the reply. net/http sends a GET again when a reused
// connection turns out closed by the server; a POST that failed is never
// sent again (the server may have acted on it): it counts as an error.
// The bench shares the machine with the server it measures, so each
// workload reports the bench's own CPU time per request ("client cpu
// µs/req", client_cpu_us_per_req in JSON).
//
// The suite mode measures Rivet itself, from the working tree, on
// PostgreSQL, at several scales:
//
//	go run ./test/bench suite [--scales 1000,10000] [--workloads …,powersync] [--json]
//
// It builds rivet and rivet-driver-fake into a temporary folder, and for
// each scale creates a private database on the server of
// RIVET_BENCH_POSTGRES_DSN (else RIVET_TEST_POSTGRES_DSN, else local trust
// auth), runs `rivet dbsync upgrade`, starts one `rivet api` and one `rivet
// conductor` (JSON-RPC on loopback, noauth, fake-hardware served by the
// out-of-process plugin), enrolls the nodes through the API, runs the
// workloads, and reads the resident memory (VmRSS, and the peak VmHWM, from
// /proc/PID/status) of the API, the conductor and the plugin processes. For
// each workload it also reports the CPU time the API and the conductor
// spent per request ("api cpu µs/req", "conductor cpu µs/req";
// api_cpu_us_per_req, conductor_cpu_us_per_req in JSON, from
// /proc/PID/stat, 10 ms resolution): on a machine shared with PostgreSQL
// and the client, the server's cost per request varies far less between
// runs than its rates, so it is the figure to compare two builds by. The
// powersync workload is a deployment of its own: one conductor holding
// --powersync-nodes nodes whose every power-state read takes
// --powersync-latency (fake_power_delay), syncing with
// sync_power_state_workers = --powersync-workers; it reads the cycles the
// conductor logs ("power-state sync cycle done") and compares the steady
// cycles' duration with N × latency / workers. Everything it starts is
// stopped, and every database dropped, when it ends, fails or is
// interrupted (Ctrl-C).
//
// wrk-get and wrk-detail measure the reads with wrk 4.1 (Debian's package
// wrk; RIVET_BENCH_WRK names another binary): 2 threads,
// --get-concurrency connections, --duration, req/s and the p50 and p99 of
// wrk --latency. wrk-get picks, per request, a random one of up to 10,000
// enrolled nodes (a Lua script, each thread seeded on its own);
// wrk-detail reads GET /v1/nodes/detail?limit=100.
//
// The goals mode measures issue 32's goals side by side:
//
//	go run ./test/bench suite --goals [--ironic] [--rounds 3] [--memory-goal] [--json]
//
// Each round starts, measures and stops, one after the other: `rivet dev`
// with its embedded defaults (SQLite in a temporary --state-dir, in-process
// RPC, --sim-nodes 0), --nodes fake-hardware nodes enrolled, then wrk-get
// and wrk-detail; with --ironic, Debian's Ironic 21.4 (python3-ironic run
// by --ironic-python: ironic-dbsync create_schema on a private PostgreSQL
// database, ironic-conductor and ironic-api with 2 API workers, noauth,
// JSON-RPC on loopback, fake interfaces only) with the same nodes and
// workloads; then enroll of --enroll-nodes nodes through the split
// deployment and through `rivet all-in-one` on PostgreSQL, the order
// swapped every round. Right after rivet dev (stopped by then), unless
// --floor=false, the machine floor: a bare net/http server (`bench
// floor-serve`, a subprocess) answering each node's GET with the bytes
// rivet dev answered it with (status, headers, body, read once after
// rivet dev's reads, served from memory), measured by the same wrk-get:
// what the machine (16 connections, wrk's two threads and the server on
// the same vCPUs) costs any Go server, beside what rivet dev adds. wrk-get
// also reports the percentage of its requests over 5 ms ("over 5 ms",
// over_5ms_pct in JSON), a figure less moved by a loaded machine when
// taken relative to the floor's from the same round. Each workload reports the CPU time of the target's
// processes and their children per request ("server cpu"). --memory-goal
// adds the powersync workload at --memory-nodes nodes (the conductor's
// memory and its cycle). The goals table gives each goal's median and
// range over the rounds, the baseline's from the same rounds, the ratio
// taken round by round, the target and whether the median meets it.
// docs/performance.md has the figures.
package main
