package api

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/rivetmetal/rivet/core/version"
)

// Microversions of the deploy verb's arguments (named here so branches
// adding versions to router.go do not collide).
var (
	verRebuildConfigdrive   = version.Version{Major: 1, Minor: 35}  // configdrive with rebuild
	verBuildConfigdrive     = version.Version{Major: 1, Minor: 56}  // configdrive as a JSON object
	verConfigdriveVendor    = version.Version{Major: 1, Minor: 59}  // vendor_data in it
	verDeployStepsArgument  = version.Version{Major: 1, Minor: 69}  // deploy_steps with active/rebuild
	verCleanDisableRamdisk  = version.Version{Major: 1, Minor: 70}  // disable_ramdisk with clean
	verDeployWaitAbort      = version.Version{Major: 1, Minor: 110} // abort from wait call-back
	configdriveObjectFields = []string{"meta_data", "network_data", "user_data", "vendor_data"}
	deployStepInterfaces    = []string{"bios", "deploy", "management", "power", "raid"}
)

// base64Alphabet is what a base64 configdrive may hold (Ironic's check,
// with the whitespace base64 values commonly carry).
const base64Alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=\n\r\t "

// provisionConfigdrive returns the configdrive, checked as Ironic's
// check_allow_configdrive: only with "active" (and "rebuild" from 1.35);
// a string is a URL or base64; a JSON object (1.56; vendor_data 1.59)
// holds only meta_data, network_data (objects), user_data (an object, a
// list, a string or null) and vendor_data (an object).
func provisionConfigdrive(body object, verb string, v version.Version) (any, error) {
	if verb == "deploy" {
		verb = "active" // its 1.73 alias
	}
	raw, present := body["configdrive"]
	if !present || isNull(raw) {
		return nil, nil
	}
	var cd any
	if err := json.Unmarshal(raw, &cd); err != nil {
		return nil, typeError("configdrive", raw, "dict or str")
	}
	if s, ok := cd.(string); ok && s == "" {
		return nil, nil
	}
	allowed := []string{"active"}
	if !v.Less(verRebuildConfigdrive) {
		allowed = append(allowed, "rebuild")
	}
	if !slices.Contains(allowed, verb) {
		return nil, errorf(http.StatusBadRequest, "Adding a config drive is only supported when setting provision state to %s", strings.Join(allowed, ", "))
	}
	switch c := cd.(type) {
	case string:
		if strings.Contains(c, "://") {
			return c, nil
		}
		if strings.Trim(c, base64Alphabet) != "" {
			return nil, errorf(http.StatusBadRequest, "Invalid configdrive format: it is neither a JSON, nor a URL, nor a base64 string")
		}
		return c, nil
	case map[string]any:
		for k, val := range c {
			if !slices.Contains(configdriveObjectFields, k) {
				return nil, errorf(http.StatusBadRequest, "Invalid configdrive format: Additional properties are not allowed ('%s' was unexpected)", k)
			}
			switch val.(type) {
			case map[string]any:
			case []any, string, nil:
				if k != "user_data" {
					return nil, errorf(http.StatusBadRequest, "Invalid configdrive format: %s must be an object", k)
				}
			default:
				return nil, errorf(http.StatusBadRequest, "Invalid configdrive format: %s has a wrong type", k)
			}
		}
		if v.Less(verBuildConfigdrive) {
			return nil, errorf(http.StatusBadRequest, "Providing a JSON object for configdrive is only supported starting with API version 1.%d", verBuildConfigdrive.Minor)
		}
		if _, ok := c["vendor_data"]; ok && v.Less(verConfigdriveVendor) {
			return nil, errorf(http.StatusBadRequest, "Providing vendor_data in configdrive is only supported starting with API version 1.%d", verConfigdriveVendor.Minor)
		}
		return c, nil
	}
	return nil, typeError("configdrive", raw, "dict or str")
}

// provisionDeploySteps returns deploy_steps (1.69), only with "active" and
// "rebuild": a list of {interface, step, args, priority}.
func provisionDeploySteps(body object, verb string) ([]map[string]any, error) {
	raw, present := body["deploy_steps"]
	if !present || isNull(raw) {
		return nil, nil
	}
	if verb != "active" && verb != "deploy" && verb != "rebuild" {
		return nil, errorf(http.StatusBadRequest, "\"deploy_steps\" is only valid when setting target provision state to active or rebuild")
	}
	var steps []map[string]any
	if err := json.Unmarshal(raw, &steps); err != nil {
		return nil, errorf(http.StatusBadRequest, "Invalid deploy_steps: expected a list of objects")
	}
	for i, st := range steps {
		iface, _ := st["interface"].(string)
		name, _ := st["step"].(string)
		prio, isNum := st["priority"].(float64)
		_, hasArgs := st["args"].(map[string]any)
		switch {
		case !slices.Contains(deployStepInterfaces, iface) || name == "":
			return nil, errorf(http.StatusBadRequest, "Invalid deploy_steps: step %d needs \"interface\" (one of %s) and \"step\"", i, strings.Join(deployStepInterfaces, ", "))
		case !hasArgs:
			return nil, errorf(http.StatusBadRequest, "Invalid deploy_steps: step %d needs \"args\" (an object)", i)
		case !isNum || prio < 0 || prio != float64(int(prio)):
			return nil, errorf(http.StatusBadRequest, "Invalid deploy_steps: step %d needs \"priority\", an integer >= 0", i)
		}
		for k := range st {
			if !slices.Contains([]string{"interface", "step", "args", "priority"}, k) {
				return nil, errorf(http.StatusBadRequest, "Invalid deploy_steps: %s", fmt.Sprintf("Additional properties are not allowed ('%s' was unexpected)", k))
			}
		}
	}
	return steps, nil
}

// laterProvisionArg reports whether body attribute a is newer than v.
func laterProvisionArg(a string, v version.Version) bool {
	switch a {
	case "deploy_steps":
		return v.Less(verDeployStepsArgument)
	case "disable_ramdisk":
		return false // checkDisableRamdisk checks it with the verb
	}
	return slices.Contains(laterProvisionArgs, a)
}
