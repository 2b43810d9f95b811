// Package states is the node provision state machine: Ironic's states,
// verbs and internal events (reference/ironic.md §10) for what API
// microversions 1.1 to 1.26 expose.
//
// Rules: a transition exists only if the table lists it; anything else is an
// *InvalidTransitionError carrying Ironic's message and HTTP 400. Stable
// states are where a node rests; every other state has a target, shown as
// target_provision_state while the node moves. The table is data: tests walk
// every (state, event) pair against it.
package states
