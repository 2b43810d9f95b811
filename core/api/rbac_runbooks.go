package api

import (
	"net/http"

	"github.com/rivetmetal/rivet/core/htpasswd"
	"github.com/rivetmetal/rivet/core/objects"
	"github.com/uptrace/bun"
)

// stepSetAction is what a request does to one deploy template or runbook.
type stepSetAction int

const (
	accessGet stepSetAction = iota
	accessUpdate
	accessDelete
)

// stepSetAccess is a step-set kind's project-scoped access control: which
// ones a list shows, whether a request may create one (and what it
// becomes), act on one.
type stepSetAccess struct {
	list        func(r *http.Request) func(*bun.SelectQuery) *bun.SelectQuery
	createCheck func(r *http.Request, body map[string]any) error
	checkAction func(r *http.Request, a stepSetAction, obj objects.Object, ops []patchOp) error
}

func (a *stepSetAccess) create(r *http.Request, body map[string]any) error {
	if a == nil || scopeOf(r) == nil {
		return nil
	}
	return a.createCheck(r, body)
}

func (a *stepSetAccess) check(r *http.Request, act stepSetAction, obj objects.Object, ops []patchOp) error {
	if a == nil || scopeOf(r) == nil {
		return nil
	}
	return a.checkAction(r, act, obj, ops)
}

// Ironic's runbook rules (common/policy.py), over the runbook's owner.
// Keystone's admin role implies manager, so Rivet's project admin is
// Ironic's project manager here.
var (
	runbookReader  = anyOf(systemReader, ownerRole(htpasswd.Reader))
	runbookAdmin   = anyOf(systemMember, ownerRole(htpasswd.Admin))
	runbookCreator = anyOf(systemMember, projectRole(htpasswd.Admin))

	policyRunbookGet          = policy{"baremetal:runbook:get", runbookReader}
	policyRunbookCreate       = policy{"baremetal:runbook:create", runbookCreator}
	policyRunbookUpdate       = policy{"baremetal:runbook:update", runbookAdmin}
	policyRunbookDelete       = policy{"baremetal:runbook:delete", runbookAdmin}
	policyRunbookUpdateOwner  = policy{"baremetal:runbook:update:owner", systemMember}
	policyRunbookUpdatePublic = policy{"baremetal:runbook:update:public", systemMember}
	// baremetal:runbook:use is RUNBOOK_ADMIN over the runbook's owner: a
	// public runbook (no owner) is the system member's to run, as in
	// Ironic, whatever the node.
	policyRunbookUse = policy{"baremetal:runbook:use", runbookAdmin}
)

// authorizeRunbookUse is baremetal:runbook:use for a provision request
// naming rb, checked once the runbook is found (Ironic's
// check_runbook_policy_and_retrieve: 404 first, then 403).
func authorizeRunbookUse(r *http.Request, rb *objects.Runbook) error {
	if sc := scopeOf(r); sc != nil && !policyRunbookUse.allow(sc, strOf(rb.Owner), "") {
		return errForbidden(policyRunbookUse)
	}
	return nil
}

// runbookAccess: a project-scoped user lists its project's runbooks and
// the public ones, reads them, creates (as admin) private runbooks its
// project owns, updates and deletes (as admin) its project's; who owns a
// runbook and whether it is public is the system member's to change.
// Another project's runbook is 403 (Ironic does not conceal runbooks).
var runbookAccess = &stepSetAccess{
	list: func(r *http.Request) func(*bun.SelectQuery) *bun.SelectQuery {
		sc := scopeOf(r)
		if sc == nil || sc.System() {
			return nil
		}
		return func(q *bun.SelectQuery) *bun.SelectQuery {
			return q.WhereGroup(" AND ", func(q *bun.SelectQuery) *bun.SelectQuery {
				return q.Where("?TableAlias.owner = ?", sc.Project).WhereOr("?TableAlias.public = ?", true)
			})
		}
	},
	createCheck: func(r *http.Request, body map[string]any) error {
		sc := scopeOf(r)
		if !policyRunbookCreate.allow(sc, "", "") {
			return errForbidden(policyRunbookCreate)
		}
		if sc.System() {
			return nil
		}
		if o, ok := body["owner"].(string); ok && o != "" && o != sc.Project {
			return errorf(http.StatusBadRequest, "Cannot create a runbook as a project scoped admin with an owner other than your own project.")
		}
		if pub, _ := body["public"].(bool); pub {
			return errorf(http.StatusBadRequest, "Cannot create a public runbook as a project scoped admin.")
		}
		body["owner"] = sc.Project
		return nil
	},
	checkAction: func(r *http.Request, act stepSetAction, obj objects.Object, ops []patchOp) error {
		sc := scopeOf(r)
		rb := obj.(*objects.Runbook)
		owner := strOf(rb.Owner)
		var checks []policy
		switch act {
		case accessGet:
			if policyRunbookGet.allow(sc, owner, "") || rb.Public {
				return nil
			}
			return errForbidden(policyRunbookGet)
		case accessDelete:
			checks = []policy{policyRunbookDelete}
		case accessUpdate:
			generic := len(ops) == 0
			for _, op := range ops {
				switch op.root() {
				case "owner":
					checks = append(checks, policyRunbookUpdateOwner)
				case "public":
					checks = append(checks, policyRunbookUpdatePublic)
				default:
					generic = true
				}
			}
			if generic {
				checks = append(checks, policyRunbookUpdate)
			}
		}
		for _, p := range checks {
			if !p.allow(sc, owner, "") {
				return errForbidden(p)
			}
		}
		return nil
	},
}
