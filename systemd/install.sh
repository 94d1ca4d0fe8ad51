#!/usr/bin/env bash
# Installs badge-agent on a Raspberry Pi (or any Debian machine) as a systemd service, one instance per printer.
#
#   sudo systemd/install.sh                       install or upgrade from this checkout
#   sudo systemd/install.sh hall-a-1 hall-a-2     ... and enable one agent per named printer
#
# What it does (safe to run again; it never overwrites a config):
#   - system packages: python3-venv, the raqm/fribidi libraries and Noto fonts the badges are drawn with, libusb
#   - a system user and group "badge-agent" (udev gives that group the printers' device nodes)
#   - a venv in /opt/badge-agent/venv with badge-agent installed from this checkout
#   - the unit template /etc/systemd/system/badge-agent@.service and the udev rules
#   - /etc/badge-agent/<printer>.yaml when missing, by `badge-agent setup` (asks for venue, location, Redis)
set -euo pipefail
cd "$(dirname "$0")/.."

PREFIX=/opt/badge-agent
CONFIG_DIR=/etc/badge-agent
USER_NAME=badge-agent

if [ "$(id -u)" -ne 0 ]; then
  echo "install.sh: run as root (sudo $0 $*)" >&2
  exit 1
fi

apt_packages=(python3-venv libraqm0 libfribidi0 fonts-noto-core fonts-noto-cjk libusb-1.0-0)
missing=()
for pkg in "${apt_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if [ "${#missing[@]}" -gt 0 ]; then
  # apt may be busy (a Pi's first boot runs unattended-upgrades): wait for it, saying so (scripts/apt-wait).
  wait=${APT_WAIT:-600}
  if ! scripts/apt-wait "$wait"; then
    echo "install.sh: apt stayed busy for $wait s; run install.sh again once it is done (or set APT_WAIT)" >&2
    exit 1
  fi
  echo "install.sh: installing ${missing[*]}"
  apt-get -o DPkg::Lock::Timeout="$wait" update -qq
  DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout="$wait" install -y -qq "${missing[@]}" >/dev/null
fi

if ! getent group "$USER_NAME" >/dev/null; then
  groupadd --system "$USER_NAME"
fi
if ! id -u "$USER_NAME" >/dev/null 2>&1; then
  useradd --system --gid "$USER_NAME" --home-dir /var/lib/badge-agent --no-create-home \
    --shell /usr/sbin/nologin --comment "badge-agent printer daemon" "$USER_NAME"
fi
# A Pi's on-board UART (/dev/ttyAMA0, /dev/serial0) belongs to dialout; udev's rules cover USB-serial adapters.
usermod -a -G dialout "$USER_NAME"

[ -x "$PREFIX/venv/bin/python" ] || python3 -m venv "$PREFIX/venv"
"$PREFIX/venv/bin/python" -m pip install -q --upgrade pip
"$PREFIX/venv/bin/python" -m pip install -q --upgrade .
"$PREFIX/venv/bin/badge-agent" --version
ln -sf "$PREFIX/venv/bin/badge-agent" /usr/local/bin/badge-agent

install -m 0644 systemd/badge-agent@.service /etc/systemd/system/badge-agent@.service
install -m 0644 systemd/99-badge-printers.rules /etc/udev/rules.d/99-badge-printers.rules
udevadm control --reload || true
udevadm trigger --subsystem-match=usb --subsystem-match=tty --subsystem-match=usbmisc || true

# Configs hold the Redis password file's path (never the password); readable by the service group only.
install -d -m 0750 -o root -g "$USER_NAME" "$CONFIG_DIR"
systemctl daemon-reload

for printer in "$@"; do
  if ! [[ "$printer" =~ ^[a-z0-9_-]+$ ]]; then
    echo "install.sh: $printer: a printer name is [a-z0-9_-]" >&2
    exit 2
  fi
  config="$CONFIG_DIR/$printer.yaml"
  if [ ! -e "$config" ]; then
    # The config comes from the printer itself: setup asks for venue, location and Redis (defaults shown), checks
    # Redis and the printer, test-prints and starts badge-agent@$printer.
    "$PREFIX/venv/bin/badge-agent" setup --name "$printer" ||
      echo "install.sh: setup for $printer did not finish (above); run: sudo badge-agent setup --name $printer" >&2
    continue
  fi
  if "$PREFIX/venv/bin/badge-agent" check-config "$config"; then
    systemctl enable "badge-agent@$printer"
    systemctl restart "badge-agent@$printer"
    echo "install.sh: badge-agent@$printer running; journalctl -u badge-agent@$printer -f"
  else
    echo "install.sh: $config has problems (above); badge-agent@$printer not started" >&2
  fi
done
