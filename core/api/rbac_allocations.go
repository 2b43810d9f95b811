package api

import (
	"net/http"

	"github.com/rivetmetal/rivet/core/htpasswd"
	"github.com/rivetmetal/rivet/core/objects"
)

// Ironic's allocation rules (common/policy.py), over the allocation's
// owner: a project-scoped user reads the allocations its project owns
// (reader) and updates or deletes them (member); the system reads
// (reader) and changes (member) every one.
var (
	allocationReader = anyOf(systemReader, ownerRole(htpasswd.Reader))
	allocationMember = anyOf(systemMember, ownerRole(htpasswd.Member))

	policyAllocationGet    = policy{"baremetal:allocation:get", allocationReader}
	policyAllocationUpdate = policy{"baremetal:allocation:update", allocationMember}
	policyAllocationDelete = policy{"baremetal:allocation:delete", allocationMember}
)

// authorizeAllocation applies p to a for the request: an allocation the
// request may not read is hidden (Ironic's check_allocation_policy_and_
// retrieve answers AllocationNotFound), then p is 403.
func authorizeAllocation(r *http.Request, a *objects.Allocation, p policy, hidden error) error {
	sc := scopeOf(r)
	if sc == nil {
		return nil
	}
	owner := strOf(a.Owner)
	if hidden != nil && !allocationReader(sc, owner, "") {
		return hidden
	}
	if !p.allow(sc, owner, "") {
		return errForbidden(p)
	}
	return nil
}

// allocationListOwner is the owner a list of allocations is narrowed to:
// a project-scoped request sees only its project's, and asking for
// another owner's is 403 (Ironic's check_list_policy, which fails on
// baremetal:allocation:list_all); "" for the system or unrestricted.
func allocationListOwner(r *http.Request) (string, error) {
	sc := scopeOf(r)
	if sc == nil || sc.System() {
		return "", nil
	}
	if q := r.URL.Query(); q.Has("owner") && q.Get("owner") != sc.Project {
		return "", errForbidden(policy{name: "baremetal:allocation:list_all"})
	}
	return sc.Project, nil
}

// authorizeAllocationOwner sets or checks the owner of an allocation a
// project-scoped request creates: its project when it names none;
// another project is 403 (that needs baremetal:allocation:create_restricted,
// the system member's).
func authorizeAllocationOwner(r *http.Request, a *objects.Allocation) error {
	sc := scopeOf(r)
	if sc == nil || sc.System() {
		return nil
	}
	if a.Owner != nil && *a.Owner != "" {
		if *a.Owner != sc.Project {
			return errorf(http.StatusForbidden, "Cannot create allocation with an owner Project ID value %s not matching the "+
				"requester Project ID %s. Policy baremetal:allocation:create_restricted is required for this capability.",
				*a.Owner, sc.Project)
		}
		return nil
	}
	p := sc.Project
	a.Owner = &p
	return nil
}
