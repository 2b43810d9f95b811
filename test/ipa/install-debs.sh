#!/bin/sh
# Debian 12 (bookworm) packages the real-agent tests need: the Python
# libraries the unmodified ironic-python-agent 9.14.1 imports, and the tools
# it shells out to. .ci/run runs this when an import or a tool is missing.
set -e
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
  python3-pbr python3-eventlet python3-netifaces python3-oslo.config \
  python3-oslo.concurrency python3-oslo.log python3-oslo.service \
  python3-oslo.utils python3-pint python3-psutil python3-pyudev \
  python3-requests python3-stevedore python3-tenacity python3-ironic-lib \
  python3-werkzeug python3-cryptography python3-tooz \
  qemu-utils parted gdisk lshw dmidecode e2fsprogs udev bsdextrautils \
  psmisc iproute2 util-linux >/dev/null
