"""Rivet's test hardware manager for the ironic-python-agent.

It makes the agent see only the loop devices named in $RIVET_IPA_DISKS
(space or comma separated), so that a test agent never touches the host's
real disks: every block device listing, the root device choice and hence
every write and wipe go to those devices. Without the variable it claims
no hardware and the agent behaves as usual.
"""

import os

from ironic_python_agent import hardware


def _disks():
    raw = os.environ.get('RIVET_IPA_DISKS', '')
    return [d for d in raw.replace(',', ' ').split() if d]


def _sectors(name):
    with open('/sys/class/block/%s/size' % name) as f:
        return int(f.read().strip())


def _device(path):
    name = os.path.basename(path)
    return hardware.BlockDevice(name=path, model='Rivet test loop disk',
                                size=_sectors(name) * 512, rotational=False,
                                vendor='rivet')


class LoopDiskHardwareManager(hardware.GenericHardwareManager):
    HARDWARE_MANAGER_NAME = 'rivet_loop_disks'
    HARDWARE_MANAGER_VERSION = '1.0'

    def evaluate_hardware_support(self):
        if not _disks():
            return hardware.HardwareSupport.NONE
        # Above every other manager (vendor ones claim SERVICE_PROVIDER).
        return hardware.HardwareSupport.SERVICE_PROVIDER + 97

    def list_block_devices(self, include_partitions=False,
                           all_serial_and_wwn=False):
        out = [_device(d) for d in _disks()]
        if include_partitions:
            for d in _disks():
                base = os.path.basename(d)
                for entry in sorted(os.listdir('/sys/class/block/%s' % base)):
                    if entry.startswith(base + 'p'):
                        out.append(_device('/dev/' + entry))
        return out

    def get_os_install_device(self, permit_refresh=False):
        node = hardware.get_cached_node() or {}
        hints = ((node.get('instance_info') or {}).get('root_device')
                 or (node.get('properties') or {}).get('root_device'))
        if hints:
            return super().get_os_install_device(permit_refresh)
        return _disks()[0]
