package bootserver

import (
	"errors"
	"fmt"
	"strings"

	"github.com/rivetmetal/rivet/core/states"
)

// instance_info keys a script is built from: drivers/ipmi's, plus
// Ironic's kernel_append_params. Nothing else of a node reaches a script.
const (
	// KeyKernel and KeyRamdisk are the http(s) URLs of the deploy kernel
	// and initrd.
	KeyKernel  = "kernel"
	KeyRamdisk = "ramdisk"
	// KeyBootISO is an http(s) URL of an ISO booted instead of kernel +
	// ramdisk; it wins when both are set.
	KeyBootISO = "boot_iso"
	// KeyBootMode ("uefi" or "bios") only appears as a comment: the
	// driver sets the boot mode with the PXE override.
	KeyBootMode = "boot_mode"
	// KeyKernelAppendParams is appended to the kernel command line.
	KeyKernelAppendParams = "kernel_append_params"
)

// ScriptKind says what a script boots.
type ScriptKind string

// The scripts Render produces.
const (
	// BootRamdisk loads the kernel and initrd and boots them.
	BootRamdisk ScriptKind = "ramdisk"
	// BootISO boots the ISO over HTTP with sanboot.
	BootISO ScriptKind = "iso"
	// BootLocal exits iPXE's script so the firmware tries the next boot
	// device, normally the local disk.
	BootLocal ScriptKind = "local"
	// BootRefused is BootLocal for a node whose instance_info could not
	// be rendered safely; it exits with an error and says so on the
	// console.
	BootRefused ScriptKind = "refused"
)

// ErrUnsafeInstanceInfo means a node's instance_info cannot be rendered
// into a script: a key is missing, or a value is not a plain http(s) URL
// or carries characters iPXE would interpret. The error names the key and
// the reason, never the value.
var ErrUnsafeInstanceInfo = errors.New("instance_info cannot be rendered safely")

// Script is a rendered iPXE script.
type Script struct {
	// Kind says what the script boots.
	Kind ScriptKind
	// Body is the script text, starting with #!ipxe.
	Body string
	// Scrubbed lists the keys whose URL had userinfo, removed from Body.
	Scrubbed []string
}

// bootStates are the provision states whose nodes boot their deploy
// image: a ramdisk deploy's instance is the ramdisk, so active is one.
var bootStates = map[string]bool{
	string(states.Deploying): true, string(states.DeployWait): true, string(states.Active): true,
	string(states.Inspecting): true, string(states.InspectWait): true, // the agent ramdisk: AgentRamdisk
}

const (
	localBody   = "#!ipxe\n# rivet: this node is not being deployed: boot the next device (local disk)\nexit\n"
	refusedBody = "#!ipxe\n# rivet: instance_info refused, see the conductor log\n" +
		"echo rivet: refusing to boot this node's deploy image: unsafe or incomplete instance_info (see the conductor log)\n" +
		"exit 1\n"
)

// Render builds n's script. A node outside deploying, wait call-back and
// active gets BootLocal. When its image cannot be rendered safely the
// error wraps ErrUnsafeInstanceInfo and the Script is BootRefused.
func Render(n Node) (Script, error) {
	if !bootStates[n.ProvisionState] {
		return Script{Kind: BootLocal, Body: localBody}, nil
	}
	s, err := renderImage(n)
	if err != nil {
		return Script{Kind: BootRefused, Body: refusedBody}, err
	}
	return s, nil
}

func renderImage(n Node) (Script, error) {
	var s Script
	url := func(key string) (string, error) {
		clean, scrubbed, err := cleanURL(key, n.InstanceInfo[key])
		if scrubbed {
			s.Scrubbed = append(s.Scrubbed, key)
		}
		return clean, err
	}
	var b strings.Builder
	b.WriteString("#!ipxe\n# rivet: ")
	if isUUID(n.UUID) { // always, unless the database holds something odd
		b.WriteString("node " + strings.ToLower(n.UUID) + ", ")
	}
	b.WriteString(n.ProvisionState + "\n") // one of bootStates' constants
	mode, _ := n.InstanceInfo[KeyBootMode].(string)
	if mode = strings.ToLower(strings.TrimSpace(mode)); mode == "uefi" || mode == "bios" {
		b.WriteString("# boot_mode " + mode + ": set by the driver with the PXE boot override\n")
	}
	b.WriteString("imgfree\n")
	if present(n.InstanceInfo, KeyBootISO) {
		iso, err := url(KeyBootISO)
		if err != nil {
			return Script{}, err
		}
		s.Kind = BootISO
		b.WriteString("sanboot --no-describe " + iso + "\n")
		s.Body = b.String()
		return s, nil
	}
	kernel, err := url(KeyKernel)
	if err != nil {
		return Script{}, err
	}
	ramdisk, err := url(KeyRamdisk)
	if err != nil {
		return Script{}, err
	}
	params, err := appendParams(n.InstanceInfo[KeyKernelAppendParams])
	if err != nil {
		return Script{}, err
	}
	// initrd=ramdisk names the initrd for EFI-stub kernels, as Ironic does.
	b.WriteString("kernel " + kernel + " initrd=ramdisk" + params + "\n")
	b.WriteString("initrd --name ramdisk " + ramdisk + "\n")
	b.WriteString("boot\n")
	s.Kind, s.Body = BootRamdisk, b.String()
	return s, nil
}

// present reports whether key is set to something other than null or
// blanks (the ipmi driver's test for "set").
func present(ii map[string]any, key string) bool {
	v, ok := ii[key]
	if s, isStr := v.(string); isStr {
		return strings.TrimSpace(s) != ""
	}
	return ok && v != nil
}

// appendParams checks kernel_append_params and returns it with a leading
// space, or "" when unset.
func appendParams(v any) (string, error) {
	if v == nil {
		return "", nil
	}
	p, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("%w: %s: not a string", ErrUnsafeInstanceInfo, KeyKernelAppendParams)
	}
	if p = strings.TrimSpace(p); p == "" {
		return "", nil
	}
	if len(p) > maxLen {
		return "", fmt.Errorf("%w: %s: longer than %d characters", ErrUnsafeInstanceInfo, KeyKernelAppendParams, maxLen)
	}
	for i := range len(p) {
		if !paramByte(p[i]) {
			return "", fmt.Errorf("%w: %s: %s at offset %d is not allowed", ErrUnsafeInstanceInfo, KeyKernelAppendParams, describeByte(p[i]), i)
		}
	}
	return " " + p, nil
}
