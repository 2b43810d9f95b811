package api

import (
	"context"
	"errors"

	"github.com/rivetmetal/rivet/core/objects"
)

// errFakeAllocations: the in-package fake conductor has no scheduler; the
// allocation tests run over a real conductor (allocations_e2e_test.go).
var errFakeAllocations = errors.New("fake conductor: allocations run over a real conductor in the tests")

func (f *fakeConductor) CreateAllocation(context.Context, *objects.Allocation, *objects.Node) (*objects.Allocation, error) {
	f.record("create_allocation")
	return nil, errFakeAllocations
}

func (f *fakeConductor) DestroyAllocation(context.Context, *objects.Allocation, *objects.Node) error {
	f.record("destroy_allocation")
	return errFakeAllocations
}
