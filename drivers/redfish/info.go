package redfish

import (
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rivetmetal/rivet/plugins"
)

// driver_info keys. The first six are Ironic's; the last two are Rivet's.
const (
	KeyAddress                 = "redfish_address"
	KeySystemID                = "redfish_system_id"
	KeyUsername                = "redfish_username"
	KeyPassword                = "redfish_password"
	KeyVerifyCA                = "redfish_verify_ca"
	KeyAuthType                = "redfish_auth_type"
	KeyVirtualMediaLocation    = "redfish_virtual_media_location"
	KeyPowerStateChangeTimeout = "redfish_power_state_change_timeout"
)

// Auth types (redfish_auth_type), as Ironic spells them.
const (
	AuthAuto    = "auto"    // a session, or basic auth when the BMC has none to spare
	AuthSession = "session" // a session only; wait for one when the BMC is full
	AuthBasic   = "basic"   // HTTP basic credentials on every request
)

// Virtual media locations (redfish_virtual_media_location).
const (
	MediaAuto    = "auto"
	MediaSystem  = "system"
	MediaManager = "manager"
)

// nodeInfo is a node's parsed driver_info. password and the other secrets
// never reach a log or an error; secrets lists every secret value so that
// error text can be scrubbed of them.
type nodeInfo struct {
	address       string // scheme://host[:port], no trailing slash; https when given without a scheme
	systemID      string // as given: an @odata.id path, an id, or ""
	username      string
	password      string
	verifyCA      string // "true", "false" or a CA bundle path
	authType      string
	mediaLocation string
	powerTimeout  time.Duration
	secrets       []string
}

// parseInfo validates driver_info; a bad or missing key is an
// *plugins.InvalidDriverInfoError naming every such key, never a value.
func parseInfo(di plugins.DriverInfo, o Options) (nodeInfo, error) {
	ni := nodeInfo{
		authType:      AuthAuto,
		mediaLocation: MediaAuto,
		verifyCA:      strconv.FormatBool(o.VerifyCADefault),
		powerTimeout:  o.PowerStateChangeTimeout,
	}
	if !o.UseSessions {
		ni.authType = AuthBasic
	}
	for k, v := range di {
		if s, ok := v.(string); ok && s != "" && plugins.IsSecretKey(k) {
			ni.secrets = append(ni.secrets, s)
		}
	}
	var missing, invalid []string
	str := func(key string) string {
		v, present := di[key]
		if !present || v == nil {
			return ""
		}
		s, ok := v.(string)
		if !ok {
			invalid = append(invalid, key)
		}
		return strings.TrimSpace(s)
	}
	addr := str(KeyAddress)
	if addr != "" && !strings.Contains(addr, "://") {
		addr = "https://" + addr // as Ironic: a schemeless address is https
	}
	switch u, err := url.Parse(addr); {
	case addr == "":
		missing = append(missing, KeyAddress)
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil ||
		(u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "":
		// Credentials belong in redfish_username/redfish_password, where
		// they are masked; a URL carrying them would leak into errors.
		invalid = append(invalid, KeyAddress)
	default:
		ni.address = u.Scheme + "://" + u.Host
	}
	ni.systemID = str(KeySystemID)
	ni.username = str(KeyUsername)
	if v, ok := di[KeyPassword]; ok && v != nil {
		if s, isString := v.(string); isString {
			ni.password = s
		} else {
			invalid = append(invalid, KeyPassword)
		}
	}
	if ni.username == "" && ni.password != "" && !slices.Contains(invalid, KeyUsername) {
		missing = append(missing, KeyUsername)
	}
	if v, ok := di[KeyVerifyCA]; ok && v != nil {
		if s, ok := verifyCA(v); ok {
			ni.verifyCA = s
		} else {
			invalid = append(invalid, KeyVerifyCA)
		}
	}
	if s := str(KeyAuthType); s != "" {
		if !slices.Contains([]string{AuthAuto, AuthSession, AuthBasic}, s) {
			invalid = append(invalid, KeyAuthType)
		}
		ni.authType = s
	}
	if s := str(KeyVirtualMediaLocation); s != "" {
		if !slices.Contains([]string{MediaAuto, MediaSystem, MediaManager}, s) {
			invalid = append(invalid, KeyVirtualMediaLocation)
		}
		ni.mediaLocation = s
	}
	if v, ok := di[KeyPowerStateChangeTimeout]; ok && v != nil {
		if secs, ok := seconds(v); ok {
			ni.powerTimeout = secs
		} else {
			invalid = append(invalid, KeyPowerStateChangeTimeout)
		}
	}
	if len(missing)+len(invalid) > 0 {
		return nodeInfo{}, &plugins.InvalidDriverInfoError{Missing: missing, Invalid: invalid}
	}
	return ni, nil
}

// verifyCA accepts a bool, a boolean string as oslo's bool_from_string
// does, or the path of an existing CA bundle.
func verifyCA(v any) (string, bool) {
	switch t := v.(type) {
	case bool:
		return strconv.FormatBool(t), true
	case string:
		switch strings.ToLower(strings.TrimSpace(t)) {
		case "1", "t", "true", "on", "y", "yes":
			return "true", true
		case "0", "f", "false", "off", "n", "no":
			return "false", true
		}
		if fi, err := os.Stat(t); err == nil && !fi.IsDir() {
			return t, true
		}
	}
	return "", false
}

// seconds accepts a positive number of seconds, as a JSON number or a
// string.
func seconds(v any) (time.Duration, bool) {
	var f float64
	switch t := v.(type) {
	case float64:
		f = t
	case int:
		f = float64(t)
	case string:
		p, err := strconv.ParseFloat(strings.TrimSpace(t), 64)
		if err != nil {
			return 0, false
		}
		f = p
	default:
		return 0, false
	}
	if !(f > 0 && f <= 24*3600) {
		return 0, false
	}
	return time.Duration(f * float64(time.Second)), true
}

// systemPath is the @odata.id of the node's system when driver_info names
// it, "" when it must be discovered.
func (ni nodeInfo) systemPath() string {
	switch {
	case ni.systemID == "":
		return ""
	case strings.HasPrefix(ni.systemID, "/"):
		return strings.TrimRight(ni.systemID, "/")
	}
	return "/redfish/v1/Systems/" + url.PathEscape(ni.systemID)
}
