package conductor

import (
	"errors"

	"github.com/rivetmetal/rivet/core/objects"
)

// configDrive is the config drive the agent writes with the image, from
// instance_info configdrive (set by the deploy request): a string (a
// gzipped, base64-encoded ISO9660 or VFAT image, or an http(s) URL of
// one) is passed as given; "" when there is none.
func (s *Service) configDrive(n *objects.Node) (string, error) {
	switch cd := n.InstanceInfo["configdrive"].(type) {
	case nil:
		return "", nil
	case string:
		return cd, nil
	default:
		return "", errors.New("a config drive given as a JSON object is not supported by the direct deploy yet: give it as a gzipped, base64-encoded image")
	}
}
