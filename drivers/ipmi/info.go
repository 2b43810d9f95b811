package ipmi

import (
	"fmt"
	"math"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/bougou/go-ipmi/pkg/types"

	"github.com/rivetmetal/rivet/plugins"
)

// driver_info keys, as Ironic's ipmitool driver names them, plus the
// conductor's [ipmi] options passed down per node.
const (
	KeyAddress                 = "ipmi_address"
	KeyPort                    = "ipmi_port"
	KeyUsername                = "ipmi_username"
	KeyPassword                = "ipmi_password"
	KeyCipherSuite             = "ipmi_cipher_suite"
	KeyPrivLevel               = "ipmi_priv_level"
	KeyTimeout                 = "ipmi_timeout"
	KeyRetries                 = "ipmi_retries"
	KeyMinCommandInterval      = "ipmi_min_command_interval"
	KeyPowerStateChangeTimeout = "ipmi_power_state_change_timeout"
)

// DefaultPort is the RMCP port.
const DefaultPort = 623

// supportedSuites are the cipher suites go-ipmi v0.9 can use: it marks every
// packet of a session both authenticated and encrypted, so only suites with
// integrity and confidentiality work (suites 1 and 2 even crash ipmi_sim).
var supportedSuites = []int{3, 17}

// params is a node's parsed driver_info.
type params struct {
	host, user, password string
	port, suite, retries int
	priv                 types.PrivilegeLevel // the session's privilege level
	timeout, interval    time.Duration
	powerTimeout         time.Duration
}

// addr is host:port, as errors and logs name the BMC.
func (p params) addr() string { return net.JoinHostPort(p.host, strconv.Itoa(p.port)) }

// privLevels are Ironic's ipmi_priv_level values (ipmitool -L).
var privLevels = map[string]types.PrivilegeLevel{
	"ADMINISTRATOR": types.PrivilegeLevelAdministrator,
	"OPERATOR":      types.PrivilegeLevelOperator,
	"USER":          types.PrivilegeLevelUser,
	"CALLBACK":      types.PrivilegeLevelCallback,
}

// parseInfo validates driver_info; missing or bad keys come back as one
// *plugins.InvalidDriverInfoError naming them (never their values).
func parseInfo(info plugins.DriverInfo, o Options) (params, error) {
	p := params{port: DefaultPort, suite: o.CipherSuite, retries: o.Retries, timeout: o.CommandTimeout,
		interval: o.MinCommandInterval, powerTimeout: o.PowerStateChangeTimeout, priv: types.PrivilegeLevelAdministrator}
	var bad []string
	if err := info.Require(KeyAddress); err != nil {
		return params{}, err
	}
	host, ok := info.StringValue(KeyAddress)
	if host = strings.TrimSpace(host); !ok || host == "" || strings.ContainsAny(host, " /") {
		bad = append(bad, KeyAddress)
	}
	p.host = host
	for _, k := range []string{KeyUsername, KeyPassword} {
		if v, present := info[k]; present && v != nil {
			if _, isString := v.(string); !isString {
				bad = append(bad, k)
			}
		}
	}
	p.user, _ = info.StringValue(KeyUsername)
	p.password, _ = info.StringValue(KeyPassword)
	if len(p.user) > 16 { // IPMI 2.0 user names are at most 16 bytes
		bad = append(bad, KeyUsername)
	}
	if v, present := info[KeyPrivLevel]; present && v != nil && v != "" {
		s, _ := v.(string)
		if lvl, ok := privLevels[strings.ToUpper(strings.TrimSpace(s))]; ok {
			p.priv = lvl
		} else {
			bad = append(bad, KeyPrivLevel)
		}
	}
	ints := []struct {
		key      string
		dst      *int
		min, max int
	}{
		{KeyPort, &p.port, 1, 65535},
		{KeyCipherSuite, &p.suite, 0, 17},
		{KeyRetries, &p.retries, 0, 10},
	}
	for _, f := range ints {
		if err := intValue(info, f.key, f.dst, f.min, f.max); err != nil {
			bad = append(bad, f.key)
		}
	}
	if !slices.Contains(supportedSuites, p.suite) && !slices.Contains(bad, KeyCipherSuite) {
		bad = append(bad, KeyCipherSuite)
	}
	durs := []struct {
		key string
		dst *time.Duration
		min time.Duration
	}{
		{KeyTimeout, &p.timeout, 10 * time.Millisecond},
		{KeyMinCommandInterval, &p.interval, 0},
		{KeyPowerStateChangeTimeout, &p.powerTimeout, 100 * time.Millisecond},
	}
	for _, f := range durs {
		if err := secondsValue(info, f.key, f.dst, f.min); err != nil {
			bad = append(bad, f.key)
		}
	}
	if len(bad) > 0 {
		return params{}, &plugins.InvalidDriverInfoError{Invalid: bad}
	}
	return p, nil
}

// number reads a JSON number or a numeric string (Ironic accepts both).
func number(v any) (float64, error) {
	switch n := v.(type) {
	case float64:
		return n, nil
	case int:
		return float64(n), nil
	case int64:
		return float64(n), nil
	case string:
		return strconv.ParseFloat(strings.TrimSpace(n), 64)
	}
	return 0, fmt.Errorf("not a number: %T", v)
}

// intValue sets *dst from key when present; absent keys keep *dst.
func intValue(info plugins.DriverInfo, key string, dst *int, lo, hi int) error {
	v, ok := info[key]
	if !ok || v == nil || v == "" {
		return nil
	}
	f, err := number(v)
	if err != nil || f != math.Trunc(f) || f < float64(lo) || f > float64(hi) {
		return fmt.Errorf("%s out of range", key)
	}
	*dst = int(f)
	return nil
}

// secondsValue sets *dst from key, given in (fractional) seconds.
func secondsValue(info plugins.DriverInfo, key string, dst *time.Duration, lo time.Duration) error {
	v, ok := info[key]
	if !ok || v == nil || v == "" {
		return nil
	}
	f, err := number(v)
	if err != nil || math.IsNaN(f) || f > 3600 {
		return fmt.Errorf("%s out of range", key)
	}
	d := time.Duration(f * float64(time.Second))
	if d < lo {
		return fmt.Errorf("%s out of range", key)
	}
	*dst = d
	return nil
}
