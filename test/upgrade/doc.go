// Package upgrade is the rolling-upgrade proof (ARCHITECTURE §4, the step
// table of seeds/000_…): a real deployment on loopback is upgraded from the
// last cut release to the working tree, one process at a time, under
// continuous client load, and must lose nothing.
//
// The deployment: a private PostgreSQL or MariaDB database, two `rivet api`
// behind HAProxy (health-checked, drained on restart), two `rivet conductor`
// with JSON-RPC and out-of-process drivers (rivet-driver-* from the release
// being run), rivet-sim for the redfish nodes, Debian's ipmi_sim for a few
// ipmi nodes, fake-hardware for the rest. About a hundred nodes sit in mixed
// states while workers, each owning its own nodes, read, PATCH markers into
// extra, switch power, deploy and undeploy, and create and delete ports,
// retrying 409 NodeLocked and 503 a few times as python-ironicclient does.
// Anything else that fails is a failure.
//
// What it runs is derived from the release table (core/release) alone
// (planFor, unit-tested on synthetic tables): R is the newest cut release,
// built from its recorded Commit.
//
//   - TestRollingUpgrade, R → HEAD, four runs: manual and automatic
//     (pin_release_version = auto) pinning on PostgreSQL and on MariaDB.
//     Each walks the step table: dbsync upgrade, conductors one at a time
//     (pinned), APIs one at a time, step 3 (manual: unpin with SIGHUP,
//     conductors then APIs; auto: the pin drops by itself when the last
//     old service stops, which must finalize), online data migrations.
//     While the fleet serves the old maximum, every microversion HEAD
//     implements above it (the keys of versionTests in
//     core/api/versions_test.go) answers 406, and a request of each new
//     resource, verb or field family (traits, allocations, deploy
//     templates, runbooks, history, inventory, inspection rules,
//     conductors, events, volume, BIOS, firmware, vmedia…; each once
//     implemented) is refused with 406 before reaching a conductor.
//     Once every API is unpinned the load moves to HEAD's maximum
//     microversion and also writes the fields it adds (the node's
//     interfaces) and uses the new resources (newload_test.go): node
//     traits set and listed, allocations (a node allocated, then the
//     allocation deleted; one kept), deploy templates, volume connectors
//     and targets, runbooks and inspection rules (once head.API reaches
//     them), node history and BIOS settings (rivet-sim) read, and a
//     direct deploy through a fake ironic-python-agent (agenttest: lookup
//     by MAC, agent token, heartbeats, the write_image step). Each
//     acknowledged write is read back at the end, and every object table
//     must have rows at HEAD's versions (an empty one is explained: a
//     kind the load reaches only above head.API, or BIOS settings no
//     driver of the run cached). In manual/postgresql the
//     first upgraded conductor runs R's driver plugins (a plugin one
//     release older than its conductor) until it is restarted with
//     HEAD's after step 2.2. In auto/postgresql, on a PostgreSQL server
//     of the test's own, a conductor is killed with SIGKILL and started
//     again, then the database is restarted, both under load after step
//     2.2 (every process new: the 0.1 API answers 500 when the database or
//     a conductor is unreachable): during each fault the client retries
//     longer (reads also after a broken connection), and a write that
//     still fails with a 503 or a broken connection, or an accepted
//     deploy or power change the fault cut short, is counted as not
//     acknowledged ("unacked"), never as lost; so is a 500 for a write
//     in flight on the killed conductor when the API's log shows that
//     call cut (EOF, reset). Any other 500, a failed read or an
//     acknowledged write missing at the end is an error.
//   - TestRollback: one conductor and one API upgraded, then put back to
//     R under load; then the full upgrade, after which an R service must
//     refuse to start.
//   - TestUpgradeChain: the oldest cut release → each later one → HEAD in
//     sequence, under load (skipped while the chain is just R → HEAD;
//     RIVET_UPGRADE_CHAIN=0.1,HEAD,HEAD runs its machinery today, the last
//     hop an upgrade of HEAD to itself).
//   - TestSkipReleaseRefused: HEAD beside a release two service-version
//     steps behind it must refuse to start (skipped with fewer than two
//     cut releases).
//   - TestNewColumnsOnOldRows: 2000 nodes written by R, then the schema
//     upgrade, HEAD's services and the online data migrations: every old
//     node reads back each Node field HEAD added (from the object
//     registry) exactly as a node HEAD creates from the same request.
//   - TestDirectDeployMini: the load's direct deploy through the fake
//     agent on one HEAD API and conductor, without load.
//   - TestNewRPCMethodsCapped (no deployment, runs always): each RPC
//     method and argument in core/rpc/testdata/HEAD/methods.json that R's
//     methods.json lacks is refused (or the argument left out) by a client
//     capped at R's RPC version, before anything is sent.
//   - TestGapA_OnlineMigrationsWhilePinned, TestGapB_AutoMissedHeartbeats,
//     TestGapC_APIUnpinnedBeforeConductors: small deployments of the
//     chain's newest upgrade that raises the service version, at the step
//     where issue 23's holes were: online data migrations while every
//     service is still pinned (must exit 2, change no row); an old service
//     SIGSTOPped past heartbeat_timeout under `auto` (no unpin, no
//     finalize); an API unpinned while a conductor is pinned (no 200 for
//     a write the conductor drops, no 500: either design, refusing or
//     capping, passes).
//
// Each upgrade run ends with: zero failed requests, every acknowledged
// write read back, no node left in a transient state or leased, every row
// at the new release's object versions, no process left behind. A table of
// requests, retries, errors, unacknowledged writes and latencies per step
// is printed per run, then one of requests and failures per request kind
// (method and route: each new resource by name), and a closing table with
// one line per run.
//
// The runs take minutes, so `go test ./...` skips them (the harness's own
// unit tests still run). Run them with
//
//	go test -count=1 -timeout 30m ./test/upgrade/ -args -upgrade
//
// (.ci/run runs it, with -v, after the README's test command). The old release is the
// newest cut release of core/release with a commit (built from git history
// by testenv.BuildRelease and cached); RIVET_UPGRADE_FROM=<commit> overrides
// it. The new release is the working tree.
package upgrade
