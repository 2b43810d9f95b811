// Package api is Rivet's REST API: Ironic v1 wire compatibility, the
// microversion negotiation of seeds/002_… with Ironic's headers and observed
// behaviour (reference/ironic.md §7), Ironic's error bodies, and the views
// that hide fields newer than the request's version.
//
// Rules: no header means the minimum (1.1); "latest" means the current max,
// which is the pinned release's API version while pinned; an unparsable
// version is 406 without range headers; a version outside the range is 406
// with them; every error body is Ironic's {"error_message": "<JSON>"}; a
// client mistake is never a 500.
package api
