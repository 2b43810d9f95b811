// Package steps holds what deploy, clean and service steps share across
// the API and the conductor: the hardware interfaces steps may name and
// their tie-break priorities (Ironic's DEPLOYING_INTERFACE_PRIORITY and
// CLEANING_INTERFACE_PRIORITY), typed steps, and the deploy-time choice of
// deploy templates from a node's instance traits (Ironic's
// conductor/steps.py _get_deployment_templates and
// utils.validate_instance_info_traits).
//
// Rules: no I/O of its own; the caller passes a Source (db.Store is one).
// Errors a client caused are *InvalidError, which the conductor answers as
// Ironic's InvalidParameterValue.
package steps
