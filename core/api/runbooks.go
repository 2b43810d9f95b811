package api

import (
	"encoding/json"
	"net/http"

	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/core/pyrepr"
	"github.com/rivetmetal/rivet/core/steps"
	"github.com/rivetmetal/rivet/core/version"
)

// v1_92 adds runbooks.
var v1_92 = version.Version{Major: 1, Minor: 92}

// runbookStepSchema is Ironic's RUNBOOK_STEP_SCHEMA (args optional).
var runbookStepSchema = stepsSchema{interfaces: steps.CleanInterfaces, numberKey: "order",
	required: []string{"interface", "step", "order"}}

// runbooks is /v1/runbooks as Ironic's RunbooksController before 1.112
// (no runbook traits, names are traits): RUNBOOK_SCHEMA, PATCH of
// disable_ramdisk, extra, name, owner, public and steps. Without
// projects (noauth, http_basic without a projects file) every caller is
// system-scoped, so any owner may be set and every runbook is listed;
// project-scoped callers follow runbookAccess (rbac_runbooks.go).
var runbooks = &stepSet{
	kind: "Runbook", collection: "runbooks", since: v1_92,
	plural: "runbooks", noun: "Runbook", lower: "runbook",
	arg: "runbook", identArg: "runbook_ident",
	steps: runbookStepSchema,
	props: []schemaProp{
		{"uuid", optionalType("string")},
		{"name", traitName},
		{"steps", runbookStepSchema.check},
		{"disable_ramdisk", optionalType("boolean")},
		{"extra", optionalType("object")},
		{"public", optionalType("boolean")},
		{"owner", nullableString(255)},
	},
	required: []string{"steps", "name"},
	fields: []string{"uuid", "name", "steps", "disable_ramdisk", "extra", "public", "owner",
		"created_at", "updated_at", "links"},
	patchable:  []string{"disable_ramdisk", "extra", "name", "owner", "public", "steps"},
	apply:      applyRunbook,
	checkPatch: checkRunbookPatch,
	access:     runbookAccess,
}

// applyRunbook sets disable_ramdisk, public (null: false) and owner.
func applyRunbook(obj objects.Object, doc map[string]any) error {
	rb := obj.(*objects.Runbook)
	rb.DisableRamdisk, _ = doc["disable_ramdisk"].(bool)
	rb.Public, _ = doc["public"].(bool)
	rb.Owner = nil
	if o, ok := doc["owner"].(string); ok {
		rb.Owner = &o
	}
	return nil
}

// checkRunbookPatch is Ironic's rule for a PATCH of owner: a public
// runbook has no owner, unless the same patch makes it private. A patch
// of public clears the owner first.
func checkRunbookPatch(ops []patchOp, doc map[string]any) error {
	var owner, public []json.RawMessage
	for _, op := range ops {
		if op.Op == "remove" {
			continue
		}
		switch op.Path {
		case "/owner":
			owner = append(owner, op.Value)
		case "/public":
			public = append(public, op.Value)
		}
	}
	if len(owner) > 0 {
		isPublic, _ := doc["public"].(bool)
		makesPublic := false
		if len(public) > 0 {
			_ = json.Unmarshal(public[0], &makesPublic)
		}
		if (isPublic && len(public) == 0) || makesPublic {
			var generic any
			raw, _ := json.Marshal(ops)
			_ = decodeJSON(raw, &generic)
			return errorf(http.StatusBadRequest, "Couldn't apply patch '%s'. Reason: There cannot be an owner for a public runbook", pyrepr.Value(generic))
		}
	}
	if len(public) > 0 {
		doc["owner"] = nil
	}
	return nil
}
