package api

import (
	"context"
	"errors"
	"net/http"

	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/core/rpc"
	"github.com/rivetmetal/rivet/plugins/redact"
)

// serveNodeQuery answers a GET with what ask learns from the node's
// conductor.
func serveNodeQuery[T any](s *server, w http.ResponseWriter, r *http.Request, ask func(context.Context, *objects.Node) (T, error)) error {
	n, err := s.getNodeByIdent(r, r.PathValue("node"))
	if err != nil {
		return err
	}
	v, err := ask(r.Context(), n)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, v)
	return nil
}

// getBootDevice serves GET /v1/nodes/{node}/management/boot_device.
func (s *server) getBootDevice(w http.ResponseWriter, r *http.Request) error {
	return serveNodeQuery(s, w, r, s.Conductor.GetBootDevice)
}

// putBootDevice serves PUT /v1/nodes/{node}/management/boot_device with
// {"boot_device", "persistent"?}: 204, as gophercloud expects.
func (s *server) putBootDevice(w http.ResponseWriter, r *http.Request) error {
	n, err := s.getNodeByIdent(r, r.PathValue("node"))
	if err != nil {
		return err
	}
	body, err := readObject(r)
	if err != nil {
		return err
	}
	if err := body.only("boot_device", "boot_device", "persistent"); err != nil {
		return err
	}
	dev, _, err := body.str("boot_device", false)
	if err != nil {
		return err
	}
	if dev == nil {
		return errorf(http.StatusBadRequest, "Invalid input for field/attribute boot_device. Value: 'None'. Mandatory field missing.")
	}
	persistent, _, err := body.boolean("persistent")
	if err != nil {
		return err
	}
	if err := s.Conductor.SetBootDevice(r.Context(), n, *dev, persistent != nil && *persistent); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// getSupportedBootDevices serves .../management/boot_device/supported.
func (s *server) getSupportedBootDevices(w http.ResponseWriter, r *http.Request) error {
	return serveNodeQuery(s, w, r, func(ctx context.Context, n *objects.Node) (map[string]any, error) {
		devs, err := s.Conductor.GetSupportedBootDevices(ctx, n)
		if devs == nil {
			devs = []string{}
		}
		return map[string]any{"supported_boot_devices": devs}, err
	})
}

// validateNode serves GET /v1/nodes/{node}/validate: each interface's result.
func (s *server) validateNode(w http.ResponseWriter, r *http.Request) error {
	return serveNodeQuery(s, w, r, func(ctx context.Context, n *objects.Node) (map[string]rpc.InterfaceValidation, error) {
		res, err := s.Conductor.ValidateDriverInterfaces(ctx, n)
		for k, iv := range res { // a driver's reason may quote a BMC URL
			if iv.Reason != nil {
				reason := redact.Text(*iv.Reason)
				iv.Reason = &reason
				res[k] = iv
			}
		}
		return res, err
	})
}

// vendorMethods serves GET /v1/nodes/{node}/vendor_passthru/methods.
func (s *server) vendorMethods(w http.ResponseWriter, r *http.Request) error {
	return serveNodeQuery(s, w, r, s.Conductor.GetNodeVendorPassthruMethods)
}

// unsupported is Ironic's UnsupportedDriverExtension.
func unsupported(status int, driver, extension string) *Error {
	return errorf(status, "Driver %s does not support %s (disabled or not implemented).", driver, extension)
}

// getConsole serves GET /v1/nodes/{node}/states/console, as Ironic: a node
// whose console is off answers {"console_enabled": false, "console_info":
// null} whatever its console interface; an enabled one answers the
// console_info its conductor keeps ({"type": "socat", "url":
// "tcp://127.0.0.1:10000"}, get_console_information, RPC 1.5).
func (s *server) getConsole(w http.ResponseWriter, r *http.Request) error {
	n, err := s.getNodeByIdent(r, r.PathValue("node"))
	if err != nil {
		return err
	}
	if !n.ConsoleEnabled {
		writeJSON(w, http.StatusOK, map[string]any{"console_enabled": false, "console_info": nil})
		return nil
	}
	info, err := s.Conductor.GetConsoleInformation(r.Context(), n)
	var c rpc.Classed
	if errors.As(err, &c) && c.ErrorClass() == "NodeConsoleNotEnabled" {
		writeJSON(w, http.StatusOK, map[string]any{"console_enabled": false, "console_info": nil})
		return nil
	}
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"console_enabled": true, "console_info": info})
	return nil
}

// putConsole serves PUT /v1/nodes/{node}/states/console {"enabled": bool}:
// the conductor checks the node's console interface (400 for no-console or
// a plugin without one) and switches the console in the background; 202
// with the console's Location, as Ironic. While pinned to a release whose
// conductors lack set_console_mode (0.2), 406.
func (s *server) putConsole(w http.ResponseWriter, r *http.Request) error {
	n, err := s.getNodeByIdent(r, r.PathValue("node"))
	if err != nil {
		return err
	}
	body, err := readObject(r)
	if err != nil {
		return err
	}
	if err := body.only("enabled", "enabled"); err != nil {
		return err
	}
	enabled, _, err := body.boolean("enabled")
	if err != nil {
		return err
	}
	if enabled == nil {
		return errorf(http.StatusBadRequest, "Invalid input for field/attribute enabled. Value: 'None'. Mandatory field missing.")
	}
	if err := s.Conductor.SetConsoleMode(r.Context(), n, *enabled); err != nil {
		return err
	}
	w.Header().Set("Location", BaseURL(r)+"/v1/nodes/"+r.PathValue("node")+"/states/console")
	w.WriteHeader(http.StatusAccepted)
	return nil
}

// injectNMI serves PUT /v1/nodes/{node}/management/inject_nmi (1.29): the
// conductor sends the NMI before the answer, 204 as Ironic. Below 1.29 the
// path does not exist (404). Ironic's handler takes no body: clients send
// {}, and whatever is sent is ignored, as Ironic ignores it.
func (s *server) injectNMI(w http.ResponseWriter, r *http.Request) error {
	if VersionFrom(r.Context()).Less(v1_29) {
		return errorf(http.StatusNotFound, msgNotFound)
	}
	n, err := s.getNodeByIdent(r, r.PathValue("node"))
	if err != nil {
		return err
	}
	if err := s.Conductor.InjectNMI(r.Context(), n); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
