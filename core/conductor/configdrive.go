package conductor

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/kdomanski/iso9660"

	"github.com/rivetmetal/rivet/core/objects"
)

// configDrive is the config drive the agent writes with the image, from
// instance_info configdrive (set by the deploy request), as Ironic's
// get_configdrive_image: a string (a gzipped, base64-encoded ISO9660 or
// VFAT image, or an http(s) URL of one) is passed as given; an object
// (REST API 1.56: meta_data, user_data, network_data, vendor_data) is
// built into a config-2 ISO9660 image; "" when there is none.
func (s *Service) configDrive(n *objects.Node) (string, error) {
	switch cd := n.InstanceInfo["configdrive"].(type) {
	case nil:
		return "", nil
	case string:
		return cd, nil
	case map[string]any:
		return buildConfigDrive(n, cd)
	default:
		return "", errors.New("instance_info configdrive must be a string or a JSON object")
	}
}

// configDriveLabel is the volume label cloud-init and Glean look for.
const configDriveLabel = "config-2"

// buildConfigDrive builds an OpenStack config drive as Ironic does
// (openstacksdk's configdrive.build): openstack/latest/meta_data.json
// (uuid and name default to the node's), user_data (a string as given,
// an object or list as JSON), network_data.json and vendor_data2.json
// when given, in an ISO9660 volume labelled config-2, gzipped and
// base64-encoded as the agent takes it. Without a network_data of its
// own the drive carries the node's network_data (API 1.66), when set.
func buildConfigDrive(n *objects.Node, cd map[string]any) (string, error) {
	meta := map[string]any{}
	if m, ok := cd["meta_data"].(map[string]any); ok {
		for k, v := range m {
			meta[k] = v
		}
	} else if cd["meta_data"] != nil {
		return "", errors.New("configdrive meta_data must be a JSON object")
	}
	if _, ok := meta["uuid"]; !ok {
		meta["uuid"] = n.UUID
	}
	if _, ok := meta["name"]; !ok && n.Name != nil {
		meta["name"] = *n.Name
	}
	files := map[string][]byte{}
	add := func(name string, v any) error {
		data, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("configdrive %s: %w", name, err)
		}
		files["openstack/latest/"+name] = data
		return nil
	}
	if err := add("meta_data.json", meta); err != nil {
		return "", err
	}
	switch ud := cd["user_data"].(type) {
	case nil:
	case string:
		files["openstack/latest/user_data"] = []byte(ud)
	case map[string]any, []any:
		data, _ := json.Marshal(ud)
		files["openstack/latest/user_data"] = data
	default:
		return "", errors.New("configdrive user_data must be a string, a JSON object or a list")
	}
	for key, name := range map[string]string{"network_data": "network_data.json", "vendor_data": "vendor_data2.json"} {
		val := cd[key]
		if key == "network_data" && val == nil && len(n.NetworkData) > 0 {
			val = n.NetworkData // the node's own (API 1.66), as Ironic
		}
		switch v := val.(type) {
		case nil:
		case map[string]any:
			if err := add(name, v); err != nil {
				return "", err
			}
		default:
			return "", fmt.Errorf("configdrive %s must be a JSON object", key)
		}
	}
	w, err := iso9660.NewWriter()
	if err != nil {
		return "", err
	}
	defer w.Cleanup()
	for path, data := range files {
		if err := w.AddFile(bytes.NewReader(data), path); err != nil {
			return "", fmt.Errorf("building the config drive: %w", err)
		}
	}
	var iso bytes.Buffer
	if err := w.WriteTo(&iso, configDriveLabel); err != nil {
		return "", fmt.Errorf("building the config drive: %w", err)
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	if _, err := zw.Write(iso.Bytes()); err != nil {
		return "", err
	}
	if err := zw.Close(); err != nil {
		return "", err
	}
	return base64.StdEncoding.EncodeToString(gz.Bytes()), nil
}
