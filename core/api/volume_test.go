package api

import (
	"net/http"
	"strings"
	"testing"

	"github.com/rivetmetal/rivet/core/release"
)

// TestV1_32Volume: the volume resources are 404 below 1.32 (and absent
// from /v1 and the node), and from 1.32 connectors and targets have
// Ironic's CRUD, fields, filters and errors.
func TestV1_32Volume(t *testing.T) {
	e := newEnv(t, withMaxAPI("1.32"))
	id := e.node(map[string]any{"name": "n1"})
	for _, path := range []string{"/v1/volume", "/v1/volume/connectors", "/v1/volume/targets",
		"/v1/nodes/" + id + "/volume", "/v1/nodes/n1/volume/connectors"} {
		if got := e.must(http.StatusNotFound, "GET", path, "1.31", nil).Fault(t); got != msgNotFound {
			t.Errorf("%s at 1.31: %q", path, got)
		}
	}
	e.must(http.StatusNotFound, "POST", "/v1/volume/connectors", "1.31", map[string]any{})
	for ver, want := range map[string]bool{"1.31": false, "1.32": true} {
		if _, ok := e.must(http.StatusOK, "GET", "/v1/", ver, nil).JSON(t)["volume"]; ok != want {
			t.Errorf("/v1 at %s lists volume: %v", ver, ok)
		}
		if _, ok := e.must(http.StatusOK, "GET", "/v1/nodes/"+id, ver, nil).JSON(t)["volume"]; ok != want {
			t.Errorf("node at %s has a volume link: %v", ver, ok)
		}
		e.must(map[bool]int{false: http.StatusNotAcceptable, true: http.StatusOK}[want], "GET", "/v1/nodes/"+id+"?fields=volume", ver, nil)
	}
	detail := e.must(http.StatusOK, "GET", "/v1/nodes/detail", "1.32", nil).JSON(t)["nodes"].([]any)[0].(map[string]any)
	if links, _ := detail["volume"].([]any); len(links) != 2 || !strings.HasSuffix(links[0].(map[string]any)["href"].(string), "/v1/nodes/"+id+"/volume") {
		t.Errorf("node detail volume link = %v", detail["volume"])
	}
	root := e.must(http.StatusOK, "GET", "/v1/volume", "1.32", nil).JSON(t)
	if href := root["connectors"].([]any)[0].(map[string]any)["href"]; href != "http://rivet.test/v1/volume/connectors" {
		t.Errorf("connectors link %v", href)
	}
	under := e.must(http.StatusOK, "GET", "/v1/nodes/n1/volume", "1.32", nil).JSON(t)
	if href := under["targets"].([]any)[1].(map[string]any)["href"]; href != "http://rivet.test/nodes/n1/volume/targets" {
		t.Errorf("node targets bookmark %v", href)
	}
}

func TestVolumeConnectors(t *testing.T) {
	e := newEnv(t, withMaxAPI("1.32"))
	const ver = "1.32"
	id := e.node(map[string]any{"name": "n1"})
	other := e.node(nil)
	body := map[string]any{"node_uuid": id, "type": "iqn", "connector_id": "iqn.2017-07.org.example:01", "extra": map[string]any{"a": "b"}}
	r := e.must(http.StatusCreated, "POST", "/v1/volume/connectors", ver, body)
	c := r.JSON(t)
	cu := c["uuid"].(string)
	if r.Header.Get("Location") != "http://rivet.test/v1/volume/connectors/"+cu {
		t.Errorf("Location %q", r.Header.Get("Location"))
	}
	for k, want := range map[string]any{"node_uuid": id, "type": "iqn", "connector_id": "iqn.2017-07.org.example:01", "updated_at": nil} {
		if c[k] != want {
			t.Errorf("created %s = %v, want %v", k, c[k], want)
		}
	}
	for _, k := range []string{"created_at", "links", "extra"} {
		if _, ok := c[k]; !ok {
			t.Errorf("created connector lacks %s", k)
		}
	}
	// Ironic's errors, in its order.
	for name, tc := range map[string]struct {
		code int
		body map[string]any
		want string
	}{
		"duplicate": {409, body, "A volume connector with type iqn and connector ID iqn.2017-07.org.example:01 already exists."},
		"same uuid": {409, map[string]any{"node_uuid": id, "type": "ip", "connector_id": "10.0.0.1", "uuid": cu},
			"A volume connector with UUID " + cu + " already exists."},
		"missing":    {400, map[string]any{"node_uuid": id, "type": "iqn"}, "Schema error for connector: 'connector_id' is a required property"},
		"unknown":    {400, map[string]any{"node_uuid": id, "type": "iqn", "connector_id": "x", "foo": 1}, "Schema error for connector: Additional properties are not allowed ('foo' was unexpected)"},
		"wrong type": {400, map[string]any{"node_uuid": id, "type": 5, "connector_id": "x"}, "Schema error for connector: 5 is not of type 'string'"},
		"extra type": {400, map[string]any{"node_uuid": id, "type": "iqn", "connector_id": "x", "extra": "s"}, "Schema error for connector: 's' is not of type 'object', 'null'"},
		"node name":  {400, map[string]any{"node_uuid": "n1", "type": "iqn", "connector_id": "x"}, "Expected UUID for node_uuid: n1"},
		"no node": {400, map[string]any{"node_uuid": "11111111-2222-3333-4444-555555555555", "type": "iqn", "connector_id": "x"},
			"Invalid input for field/attribute node_uuid. Value: '11111111-2222-3333-4444-555555555555'. "},
		"bad uuid": {400, map[string]any{"node_uuid": id, "type": "iqn", "connector_id": "x", "uuid": "nope"}, "Expected UUID for uuid: nope"},
	} {
		if got := e.must(tc.code, "POST", "/v1/volume/connectors", ver, tc.body).Fault(t); got != tc.want {
			t.Errorf("%s: %q, want %q", name, got, tc.want)
		}
	}
	if got := e.must(http.StatusBadRequest, "POST", "/v1/nodes/n1/volume/connectors", ver, body).Fault(t); got != "Malformed request URI." {
		t.Errorf("create under a node: %q", got)
	}
	e.must(http.StatusCreated, "POST", "/v1/volume/connectors", ver, map[string]any{"node_uuid": other, "type": "wwpn", "connector_id": "50:01", "uuid": nil})

	// Lists: default fields, detail, fields, filters, under a node.
	list := e.must(http.StatusOK, "GET", "/v1/volume/connectors", ver, nil).JSON(t)["connectors"].([]any)
	if len(list) != 2 || len(list[0].(map[string]any)) != 5 {
		t.Errorf("list = %v", list)
	}
	if d := e.must(http.StatusOK, "GET", "/v1/volume/connectors?detail=True", ver, nil).JSON(t)["connectors"].([]any)[0].(map[string]any); d["extra"] == nil || d["created_at"] == nil {
		t.Errorf("detail item %v", d)
	}
	if f := e.must(http.StatusOK, "GET", "/v1/volume/connectors?fields=type", ver, nil).JSON(t)["connectors"].([]any)[0].(map[string]any); len(f) != 2 || f["type"] != "iqn" {
		t.Errorf("fields=type item %v", f)
	}
	if got := e.must(http.StatusBadRequest, "GET", "/v1/volume/connectors?fields=type&detail=true", ver, nil).Fault(t); got != "Can't fetch a subset of fields with 'detail' set" {
		t.Errorf("fields and detail: %q", got)
	}
	if got := e.must(http.StatusBadRequest, "GET", "/v1/volume/connectors?fields=bogus", ver, nil).Fault(t); !strings.HasPrefix(got, "Schema error: 'bogus' is not one of ['connector_id',") {
		t.Errorf("bad field: %q", got)
	}
	e.must(http.StatusBadRequest, "GET", "/v1/volume/connectors?sort_key=extra", ver, nil)
	for _, path := range []string{"/v1/volume/connectors?node=n1", "/v1/volume/connectors?node=" + id, "/v1/nodes/n1/volume/connectors", "/v1/nodes/" + id + "/volume/connectors?detail=true"} {
		if l := e.must(http.StatusOK, "GET", path, ver, nil).JSON(t)["connectors"].([]any); len(l) != 1 || l[0].(map[string]any)["uuid"] != cu {
			t.Errorf("%s = %v", path, l)
		}
	}
	e.must(http.StatusNotFound, "GET", "/v1/nodes/nope/volume/connectors", ver, nil)
	page := e.must(http.StatusOK, "GET", "/v1/volume/connectors?limit=1", ver, nil).JSON(t)
	if next, _ := page["next"].(string); !strings.Contains(next, "marker="+cu) {
		t.Errorf("next = %v", page["next"])
	}
	if l := e.must(http.StatusOK, "GET", "/v1/volume/connectors?marker="+cu, ver, nil).JSON(t)["connectors"].([]any); len(l) != 1 {
		t.Errorf("after marker: %v", l)
	}

	// One item.
	if got := e.must(http.StatusOK, "GET", "/v1/volume/connectors/"+cu+"?fields=connector_id", ver, nil).JSON(t); len(got) != 2 {
		t.Errorf("get with fields: %v", got)
	}
	if got := e.must(http.StatusBadRequest, "GET", "/v1/volume/connectors/nope", ver, nil).Fault(t); got != "Expected UUID for connector_uuid: nope" {
		t.Errorf("get by a non-UUID: %q", got)
	}
	missing := "11111111-2222-3333-4444-555555555555"
	if got := e.must(http.StatusNotFound, "GET", "/v1/volume/connectors/"+missing, ver, nil).Fault(t); got != "Volume connector "+missing+" could not be found." {
		t.Errorf("missing: %q", got)
	}
	if got := e.must(http.StatusBadRequest, "GET", "/v1/nodes/n1/volume/connectors/"+cu, ver, nil).Fault(t); got != "Malformed request URI." {
		t.Errorf("get under a node: %q", got)
	}

	// Updates and deletions need the node powered off.
	patch := []map[string]any{{"op": "replace", "path": "/connector_id", "value": "iqn.2017-07.org.example:02"}}
	if got := e.must(http.StatusBadRequest, "PATCH", "/v1/volume/connectors/"+cu, ver, patch).Fault(t); got != `The requested action "volume connector update" can not be performed on node "`+id+`" while it is in state "None".` {
		t.Errorf("update with power unknown: %q", got)
	}
	e.must(http.StatusAccepted, "PUT", "/v1/nodes/n1/states/power", ver, map[string]any{"target": "power off"})
	got := e.must(http.StatusOK, "PATCH", "/v1/volume/connectors/"+cu, ver, patch).JSON(t)
	if got["connector_id"] != "iqn.2017-07.org.example:02" {
		t.Errorf("patched: %v", got)
	}
	for name, tc := range map[string]struct {
		patch []map[string]any
		want  string
	}{
		"uuid":      {[]map[string]any{{"op": "replace", "path": "/uuid", "value": missing}}, "Cannot patch /uuid. Only the following can be updated: connector_id, extra, node_uuid, type"},
		"node name": {[]map[string]any{{"op": "replace", "path": "/node_uuid", "value": "n1"}}, "Expected a UUID for node_uuid, but received n1."},
		"no node":   {[]map[string]any{{"op": "replace", "path": "/node_uuid", "value": missing}}, "Node " + missing + " could not be found."},
		"remove":    {[]map[string]any{{"op": "remove", "path": "/type"}}, "Schema error for patch: 'type' is a required property"},
		"type":      {[]map[string]any{{"op": "replace", "path": "/type", "value": true}}, "Schema error for patch: True is not of type 'string'"},
	} {
		if got := e.must(http.StatusBadRequest, "PATCH", "/v1/volume/connectors/"+cu, ver, tc.patch).Fault(t); got != tc.want {
			t.Errorf("patch %s: %q, want %q", name, got, tc.want)
		}
	}
	dup := []map[string]any{{"op": "replace", "path": "/type", "value": "wwpn"}, {"op": "replace", "path": "/connector_id", "value": "50:01"}}
	if got := e.must(http.StatusConflict, "PATCH", "/v1/volume/connectors/"+cu, ver, dup).Fault(t); got != "A volume connector with type wwpn and connector ID 50:01 already exists." {
		t.Errorf("patch to a duplicate: %q", got)
	}
	e.must(http.StatusBadRequest, "PATCH", "/v1/nodes/n1/volume/connectors/"+cu, ver, patch)
	e.must(http.StatusBadRequest, "DELETE", "/v1/nodes/n1/volume/connectors/"+cu, ver, nil)
	e.must(http.StatusNoContent, "DELETE", "/v1/volume/connectors/"+cu, ver, nil)
	e.must(http.StatusNotFound, "DELETE", "/v1/volume/connectors/"+cu, ver, nil)
}

func TestVolumeTargets(t *testing.T) {
	e := newEnv(t, withMaxAPI("1.32"))
	const ver = "1.32"
	id := e.node(map[string]any{"name": "n1"})
	body := map[string]any{"node_uuid": id, "volume_type": "iscsi", "boot_index": 0, "volume_id": "vol-1",
		"properties": map[string]any{"target_lun": 0, "auth_password": "s3cret"}}
	tg := e.must(http.StatusCreated, "POST", "/v1/volume/targets", ver, body).JSON(t)
	tu := tg["uuid"].(string)
	if props := tg["properties"].(map[string]any); props["auth_password"] != Masked || props["target_lun"] != float64(0) {
		t.Errorf("properties %v", props)
	}
	if tg["boot_index"] != float64(0) || tg["volume_type"] != "iscsi" {
		t.Errorf("created %v", tg)
	}
	for name, tc := range map[string]struct {
		code int
		body map[string]any
		want string
	}{
		"same boot index": {409, map[string]any{"node_uuid": id, "volume_type": "iscsi", "boot_index": 0, "volume_id": "vol-2"},
			"A volume target with boot index '0' for the same node already exists."},
		"missing":    {400, map[string]any{"node_uuid": id, "volume_type": "iscsi", "volume_id": "v"}, "Schema error for target: 'boot_index' is a required property"},
		"index type": {400, map[string]any{"node_uuid": id, "volume_type": "iscsi", "boot_index": "1", "volume_id": "v"}, "Schema error for target: '1' is not of type 'integer'"},
		"fraction":   {400, map[string]any{"node_uuid": id, "volume_type": "iscsi", "boot_index": 1.5, "volume_id": "v"}, "Schema error for target: 1.5 is not of type 'integer'"},
		"too long": {400, map[string]any{"node_uuid": id, "volume_type": "iscsi", "boot_index": 1, "volume_id": strings.Repeat("v", 256)},
			"Invalid input for field/attribute volume_id. Value: '" + strings.Repeat("v", 256) + "'. Longer than 255 characters."},
	} {
		if got := e.must(tc.code, "POST", "/v1/volume/targets", ver, tc.body).Fault(t); got != tc.want {
			t.Errorf("%s: %q, want %q", name, got, tc.want)
		}
	}
	second := e.must(http.StatusCreated, "POST", "/v1/volume/targets", ver, map[string]any{"node_uuid": id, "volume_type": "iscsi", "boot_index": 1.0, "volume_id": "vol-2"}).JSON(t)
	list := e.must(http.StatusOK, "GET", "/v1/nodes/"+id+"/volume/targets?sort_key=boot_index&sort_dir=desc", ver, nil).JSON(t)["targets"].([]any)
	if len(list) != 2 || list[0].(map[string]any)["uuid"] != second["uuid"] || len(list[0].(map[string]any)) != 6 {
		t.Errorf("targets by boot index desc: %v", list)
	}
	e.must(http.StatusBadRequest, "GET", "/v1/volume/targets?sort_key=properties", ver, nil)
	e.must(http.StatusAccepted, "PUT", "/v1/nodes/n1/states/power", ver, map[string]any{"target": "power off"})
	dup := []map[string]any{{"op": "replace", "path": "/boot_index", "value": 1}}
	if got := e.must(http.StatusConflict, "PATCH", "/v1/volume/targets/"+tu, ver, dup).Fault(t); got != "A volume target with boot index '1' for the same node already exists." {
		t.Errorf("patch to a used boot index: %q", got)
	}
	up := e.must(http.StatusOK, "PATCH", "/v1/volume/targets/"+tu, ver, []map[string]any{{"op": "add", "path": "/properties/target_lun", "value": 3},
		{"op": "replace", "path": "/boot_index", "value": 5}}).JSON(t)
	if up["boot_index"] != float64(5) || up["properties"].(map[string]any)["target_lun"] != float64(3) || up["properties"].(map[string]any)["auth_password"] != Masked {
		t.Errorf("patched target %v", up)
	}
	// Deletion: with the power on, only in enroll, manageable or adopt
	// failed.
	e.must(http.StatusAccepted, "PUT", "/v1/nodes/n1/states/power", ver, map[string]any{"target": "power on"})
	e.must(http.StatusNoContent, "DELETE", "/v1/volume/targets/"+second["uuid"].(string), ver, nil)
	e.must(http.StatusAccepted, "PUT", "/v1/nodes/n1/states/provision", ver, map[string]any{"target": "manage"})
	e.must(http.StatusAccepted, "PUT", "/v1/nodes/n1/states/provision", ver, map[string]any{"target": "provide"})
	if got := e.must(http.StatusBadRequest, "DELETE", "/v1/volume/targets/"+tu, ver, nil).Fault(t); got != `The requested action "volume target deletion" can not be performed on node "`+id+`" while it is in state "power on".` {
		t.Errorf("delete with power on in available: %q", got)
	}
	e.must(http.StatusAccepted, "PUT", "/v1/nodes/n1/states/power", ver, map[string]any{"target": "power off"})
	e.must(http.StatusNoContent, "DELETE", "/v1/volume/targets/"+tu, ver, nil)
}

// TestVolumeNodeDelete: deleting a node deletes its volume connectors and
// targets.
func TestVolumeNodeDelete(t *testing.T) {
	e := newEnv(t, withMaxAPI("1.32"))
	id := e.node(nil)
	e.must(http.StatusCreated, "POST", "/v1/volume/connectors", "1.32", map[string]any{"node_uuid": id, "type": "ip", "connector_id": "10.0.0.1"})
	e.must(http.StatusCreated, "POST", "/v1/volume/targets", "1.32", map[string]any{"node_uuid": id, "volume_type": "iscsi", "boot_index": 0, "volume_id": "v"})
	e.must(http.StatusNoContent, "DELETE", "/v1/nodes/"+id, "1.32", nil)
	for _, coll := range []string{"connectors", "targets"} {
		if l := e.must(http.StatusOK, "GET", "/v1/volume/"+coll, "1.32", nil).JSON(t)[coll].([]any); len(l) != 0 {
			t.Errorf("%s left after the node's deletion: %v", coll, l)
		}
	}
}

// TestVolumePinned: pinned to release 0.2 (API 1.31) the volume API is
// out of reach: 1.32 is refused and latest is 1.31, where it is 404.
func TestVolumePinned(t *testing.T) {
	tbl := release.Default()
	pin, err := tbl.ParsePin("0.2")
	if err != nil {
		t.Fatal(err)
	}
	e := newEnvPinned(t, release.NewPinner(tbl, pin), withMaxAPI("1.32"))
	id := e.node(nil)
	body := map[string]any{"node_uuid": id, "type": "ip", "connector_id": "10.0.0.1"}
	e.must(http.StatusNotAcceptable, "POST", "/v1/volume/connectors", "1.32", body)
	e.must(http.StatusNotFound, "POST", "/v1/volume/connectors", "latest", body)
	e.must(http.StatusNotFound, "GET", "/v1/volume", "latest", nil)
	for _, c := range e.cond.calls {
		if strings.Contains(c, "volume") {
			t.Errorf("a pinned API sent %s", c)
		}
	}
}
