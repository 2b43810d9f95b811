package api

import (
	"github.com/rivetmetal/rivet/core/steps"
	"github.com/rivetmetal/rivet/core/version"
)

// v1_55 adds deploy templates.
var v1_55 = version.Version{Major: 1, Minor: 55}

// deployStepSchema is Ironic's DEPLOY_STEP_SCHEMA.
var deployStepSchema = stepsSchema{interfaces: steps.DeployInterfaces, numberKey: "priority",
	required: []string{"interface", "step", "args", "priority"}}

// deployTemplates is /v1/deploy_templates as Ironic's
// DeployTemplatesController: its TEMPLATE_SCHEMA (description is accepted
// and, as in Ironic, not stored), DEPLOY_STEP_SCHEMA, and PATCH of extra,
// name, steps and description.
var deployTemplates = &stepSet{
	kind: "DeployTemplate", collection: "deploy_templates", since: v1_55,
	plural: "deploy templates", noun: "Deploy template", lower: "deploy template",
	arg: "template", identArg: "template_ident",
	steps: deployStepSchema,
	props: []schemaProp{
		{"description", nullableString(255)},
		{"extra", optionalType("object")},
		{"name", traitName},
		{"steps", deployStepSchema.check},
		{"uuid", optionalType("string")},
	},
	required:  []string{"steps", "name"},
	fields:    []string{"uuid", "name", "steps", "extra", "created_at", "updated_at", "links"},
	patchable: []string{"extra", "name", "steps", "description"},
}
