// Package api is Rivet's REST API: Ironic v1 wire compatibility for
// microversions 1.1–1.31, the microversion negotiation of seeds/002_… with
// Ironic's headers and observed behaviour (reference/ironic.md §7, §11),
// Ironic's error bodies, and the views that hide fields newer than the
// request's version.
//
// New(Deps) returns the whole API as one http.Handler, so rivet api,
// all-in-one and tests build it the same way: the DB is read (and, for
// chassis and portgroup creation, written) directly through db.Store, as
// Ironic does; everything that touches a node goes to its conductor through
// the Conductor interface (rpc.ConductorAPI in production).
//
// Rules:
//   - No header means the minimum (1.1); "latest" means the current max,
//     which is the pinned release's API version while pinned; an unparsable
//     version is 406 without range headers; a version outside the range is
//     406 with them.
//   - Each resource states its gating table once (nodeSince, portSince,
//     portgroupSince): newer fields are hidden on the way out and 406 on the
//     way in; newer verbs and arguments are 406; newer resources are 404.
//     versions_test.go names the test of every claimed microversion.
//   - Every error body is Ironic's {"error_message": "<JSON>"} with
//     Ironic's message, the mux's own 404/405 included. A client mistake is
//     never a 500; fuzz targets hold that for PATCH and POST bodies.
//   - Secrets are masked ("******") in every response, PATCH replies and
//     error messages included: driver_info, driver_internal_info and
//     instance_info by oslo's sanitize keys, image_url and configdrive
//     always. Documents a PATCH applies to are unmasked, so a PATCH never
//     writes the mask back.
//   - / and /v1 and the ramdisk endpoints (lookup, heartbeat) are public;
//     everything else passes the configured auth (noauth or http_basic).
package api
