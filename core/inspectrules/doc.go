// Package inspectrules holds inspection rules (API 1.96, Ironic's
// ironic/common/inspection_rules): the catalogue of condition operators and
// actions with their arguments, the validation of a rule, variable
// interpolation in Python's str.format style ("{inventory[cpu][count]}",
// "{node.driver_info[ipmi_address]}", "{item}" in loops), and the engine
// that runs the rules of a phase on a node's inspection data, highest
// priority first. It knows nothing of the database or the conductor: what
// actions change goes through Env.
package inspectrules
