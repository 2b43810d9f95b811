package acme

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/rivetmetal/rivet/plugins"
)

// driver_info keys, named after the hardware type as Ironic's are.
const (
	KeyAddress  = "acme_address"
	KeyUsername = "acme_username"
	KeyPassword = "acme_password"
)

// Driver drives Acme BMCs. It serves only the power interface.
type Driver struct {
	log  *slog.Logger
	http *http.Client
}

// New returns an Acme driver. log may be nil (discard); hc may be nil for a
// client with a 30s timeout.
func New(log *slog.Logger, hc *http.Client) *Driver {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if hc == nil {
		hc = &http.Client{Timeout: 30 * time.Second}
	}
	return &Driver{log: log, http: hc}
}

// Describe implements plugins.Driver.
func (d *Driver) Describe() plugins.Description {
	return plugins.Description{Name: "acme", Version: "0.1.0", HardwareTypes: []string{"acme"}}
}

// bmc is the parsed driver_info.
type bmc struct{ address, username, password string }

func parse(info plugins.DriverInfo) (bmc, error) {
	if err := info.Require(KeyAddress, KeyUsername, KeyPassword); err != nil {
		return bmc{}, err // names the missing keys, never their values
	}
	addr, _ := info.StringValue(KeyAddress)
	if !strings.HasPrefix(addr, "http://") && !strings.HasPrefix(addr, "https://") {
		return bmc{}, &plugins.InvalidDriverInfoError{Invalid: []string{KeyAddress}}
	}
	user, _ := info.StringValue(KeyUsername)
	pass, _ := info.StringValue(KeyPassword)
	return bmc{address: strings.TrimRight(addr, "/"), username: user, password: pass}, nil
}

// do sends one request to the node's BMC and decodes a JSON answer into out.
func (d *Driver) do(ctx context.Context, node plugins.Node, method, path string, body, out any) error {
	b, err := parse(node.DriverInfo)
	if err != nil {
		return err
	}
	var payload bytes.Buffer
	if body != nil {
		if err := json.NewEncoder(&payload).Encode(body); err != nil {
			return err
		}
	}
	req, err := http.NewRequestWithContext(ctx, method, b.address+path, &payload)
	if err != nil {
		return err
	}
	req.SetBasicAuth(b.username, b.password)
	resp, err := d.http.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		// The URL is safe to show; the credentials travel in a header.
		return fmt.Errorf("%s %s: %w", method, path, plugins.ErrBMCUnreachable)
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusServiceUnavailable:
		return plugins.MarkRetryable(fmt.Errorf("%s %s: BMC busy", method, path))
	case resp.StatusCode == http.StatusUnauthorized:
		return &plugins.InvalidDriverInfoError{Invalid: []string{KeyUsername, KeyPassword}}
	case resp.StatusCode >= 300:
		return fmt.Errorf("%s %s: HTTP %d", method, path, resp.StatusCode)
	}
	if out == nil {
		return nil
	}
	return json.NewDecoder(resp.Body).Decode(out)
}

type powerBody struct {
	State string `json:"state"`
}

// GetPowerState implements plugins.PowerStateGetter.
func (d *Driver) GetPowerState(ctx context.Context, node plugins.Node) (plugins.PowerState, error) {
	var p powerBody
	if err := d.do(ctx, node, http.MethodGet, "/power", nil, &p); err != nil {
		return "", fmt.Errorf("driver acme: node %s: get power state: %w", node.UUID, err)
	}
	switch p.State {
	case "on":
		return plugins.PowerOn, nil
	case "off":
		return plugins.PowerOff, nil
	}
	return plugins.PowerError, nil
}

// SetPowerState implements plugins.PowerSetter.
func (d *Driver) SetPowerState(ctx context.Context, node plugins.Node, target plugins.PowerState) error {
	state := map[plugins.PowerState]string{plugins.PowerOn: "on", plugins.PowerOff: "off"}[target]
	if state == "" {
		return fmt.Errorf("driver acme: node %s: set power %q: %w", node.UUID, target, plugins.ErrNotSupported)
	}
	if err := d.do(ctx, node, http.MethodPut, "/power", powerBody{State: state}, nil); err != nil {
		return fmt.Errorf("driver acme: node %s: set power state: %w", node.UUID, err)
	}
	d.log.Info("power set", "node", node.UUID, "target", string(target))
	return nil
}

// Reboot implements plugins.Rebooter.
func (d *Driver) Reboot(ctx context.Context, node plugins.Node) error {
	if err := d.do(ctx, node, http.MethodPost, "/reset", nil, nil); err != nil {
		return fmt.Errorf("driver acme: node %s: reboot: %w", node.UUID, err)
	}
	return nil
}
