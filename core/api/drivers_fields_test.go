package api

import (
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestV1_77DriverFields(t *testing.T) {
	e := newEnv(t, withMaxAPI("1.77"))
	for _, path := range []string{"/v1/drivers?fields=name", "/v1/drivers/ipmi?fields=name"} {
		e.must(http.StatusNotAcceptable, "GET", path, "1.76", nil)
	}
	list := e.must(http.StatusOK, "GET", "/v1/drivers?fields=name,hosts", "1.77", nil).JSON(t)["drivers"].([]any)
	if len(list) != 2 {
		t.Fatalf("drivers = %v", list)
	}
	for _, d := range list {
		if diff := cmp.Diff([]string{"hosts", "links", "name"}, keysOf(d.(map[string]any))); diff != "" {
			t.Errorf("list item (-want +got):\n%s", diff)
		}
	}
	one := e.must(http.StatusOK, "GET", "/v1/drivers/ipmi?fields=default_power_interface,type", "1.77", nil).JSON(t)
	if diff := cmp.Diff(map[string]any{"default_power_interface": "ipmitool", "type": "dynamic", "links": one["links"]}, one); diff != "" {
		t.Errorf("driver (-want +got):\n%s", diff)
	}
	bad := map[string]string{
		// A list without ?detail has no interface fields.
		"/v1/drivers?fields=default_power_interface": `Field(s) "default_power_interface" are not valid`,
		"/v1/drivers/ipmi?fields=bogus,name":         `Field(s) "bogus" are not valid`,
		"/v1/drivers?fields=name&detail=true":        "Can not specify ?detail=True and fields in the same request.",
	}
	for path, want := range bad {
		if got := e.must(http.StatusBadRequest, "GET", path, "1.77", nil).Fault(t); got != want {
			t.Errorf("%s: %q, want %q", path, got, want)
		}
	}
}
