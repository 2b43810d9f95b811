// Package objects holds Rivet's versioned objects: the machinery (registry,
// field tables, conversions, wire primitives, fingerprints) and the object
// kinds (Node, Port, Portgroup, Chassis, Conductor, Trait, DeployTemplate,
// Runbook, InspectionRule, …).
//
// Rules (ARCHITECTURE §3, seeds/000_…):
//   - In memory an object is always at its kind's latest version: one Go
//     struct per kind (the hub). Older versions exist only at four
//     boundaries, each a Registry method: DB read (FromDB, to latest;
//     FromDBReadOnly for views, which cannot be saved), DB
//     write (ForDB, to the target), RPC send (Serialize, to the target) and
//     RPC receive (Deserialize, to latest). Target gives the target version
//     under a pin.
//   - Each kind declares its fields once, in a table of Field (canonical
//     snake_case name = DB column = wire data key, the version it appeared
//     in, its default, nullability). The table drives both conversion
//     directions, API field hiding (FieldsAt, Available) and the
//     fingerprint. Hand converters (Step.Up/Step.Down) exist only for
//     changes that are not additive, such as the seed's extra→meta.
//   - Conversions take the seed's remove_unavailable_fields flag: on the
//     wire, fields the target lacks are removed; for the DB they are reset
//     to their defaults and marked changed, so the write clears them. A
//     conversion marks every field it changes, so a later save writes it.
//   - Changing a kind's fields or remote methods without bumping its version
//     makes registration fail: the fingerprint pinned in the kind's
//     declaration no longer matches (see Kind.Fingerprint).
//   - Registration is explicit: NewRegistry then Install, called from cmd;
//     there is no init(). A Registry is read-only after registration and
//     then safe for concurrent use.
//   - No storage or transport concerns here: no bun tags, no SQL, no HTTP.
package objects
