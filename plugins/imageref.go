package plugins

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"
)

// ImageRefKeys are the instance_info and driver_info keys that name an
// image, as Ironic names them.
var ImageRefKeys = []string{"image_source", "boot_iso", "kernel", "ramdisk", "deploy_kernel", "deploy_ramdisk", "deploy_iso", "rescue_kernel", "rescue_ramdisk"}

// glanceID is what Ironic takes for a Glance image id: a UUID, with or
// without dashes.
var glanceID = regexp.MustCompile(`^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$`)

// CheckImageRef checks an image reference as Ironic's image services take
// it: an http or https URL with a host, a file URL with an absolute path, a
// glance:// reference, or a bare Glance image id (a UUID). Its error says
// which forms are accepted and never repeats the value, which may carry
// credentials.
func CheckImageRef(ref string) error {
	ref = strings.TrimSpace(ref)
	if ref == "" {
		return fmt.Errorf("empty image reference")
	}
	if glanceID.MatchString(ref) {
		return nil
	}
	u, err := url.Parse(ref)
	if err != nil {
		return fmt.Errorf("not a URL or an image id")
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
		if u.Host == "" || u.Hostname() == "" {
			return fmt.Errorf("%s URL without a host", u.Scheme)
		}
		return nil
	case "file":
		if u.Host != "" && u.Host != "localhost" || !strings.HasPrefix(u.Path, "/") {
			return fmt.Errorf("file URL must be file:///absolute/path")
		}
		return nil
	case "glance":
		if u.Host == "" && strings.Trim(u.Path, "/") == "" && u.Opaque == "" {
			return fmt.Errorf("glance reference without an image id")
		}
		return nil
	case "":
		return fmt.Errorf("not a URL (http://, https://, file://) or a Glance image id")
	}
	return fmt.Errorf("unsupported scheme %q: use http, https, file or a Glance image id", u.Scheme)
}
