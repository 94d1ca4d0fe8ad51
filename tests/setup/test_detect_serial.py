"""detect never writes to a console or an on-board serial port unless it is named: only USB-serial adapters (their
sysfs device on a USB bus) are asked by default, never ttyS*, ttyAMA*, /dev/console or the kernel's console."""

from __future__ import annotations

import os
from pathlib import Path

from detect.serial import kernel_consoles, serial_ports
from tests.support.netns import run_in_netns


def _tty(sys_root: Path, name: str, device: str | None) -> None:
    entry = sys_root / "class" / "tty" / name
    entry.mkdir(parents=True)
    if device is not None:
        target = sys_root / "devices" / device / name
        target.mkdir(parents=True)
        os.symlink(target, entry / "device")


def test_only_usb_serial_adapters_that_are_not_the_console_are_listed(tmp_path: Path) -> None:
    sys_root = tmp_path / "sys"
    _tty(sys_root, "ttyS0", "platform/serial8250/tty")  # a PC's UART: often the console of a VM
    _tty(sys_root, "ttyAMA0", "platform/soc/fe201000.serial/tty")  # a Pi's PL011
    _tty(sys_root, "ttyUSB0", "platform/soc/fe980000.usb/usb1/1-1/1-1.2/1-1.2:1.0/ttyUSB0")
    _tty(sys_root, "ttyACM0", "pci0000:00/0000:00:14.0/usb2/2-3/2-3:1.0/tty")
    _tty(sys_root, "ttyUSB1", "pci0000:00/0000:00:14.0/usb2/2-4/2-4:1.0/ttyUSB1")  # the console, below
    _tty(sys_root, "console", None)
    _tty(sys_root, "tty1", None)  # a virtual terminal: no hardware
    cmdline = tmp_path / "cmdline"
    cmdline.write_text("root=/dev/mmcblk0p2 console=serial0,115200 console=ttyUSB1,115200 quiet\n")
    assert kernel_consoles(cmdline) == {"serial0", "ttyUSB1"}
    assert serial_ports(sys_root, cmdline) == ["/dev/ttyACM0", "/dev/ttyUSB0"]
    assert serial_ports(tmp_path / "no-sys", cmdline) == []


def test_detect_with_no_arguments_asks_no_console_says_what_it_asked_and_exits_68(tmp_path: Path) -> None:
    # The default path as typed: this machine's own serial ports and /24 (the namespace's). A VM's or a Pi's ttyS0
    # or ttyAMA0, the kernel's console here too, is never asked.
    script = 'rc=0; python -m agent detect --no-mdns --no-usb --timeout 0.2 > "$OUT/detect.txt" 2>&1 || rc=$?\n'
    script += 'echo "$rc" > "$OUT/rc"\n'
    ran = run_in_netns(script, env={"OUT": str(tmp_path)}, timeout=100)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    out = (tmp_path / "detect.txt").read_text()
    assert (tmp_path / "rc").read_text().strip() == "68", out
    asked = next(line for line in out.splitlines() if line.startswith("serial ports asked: "))
    assert "ttyS" not in asked and "ttyAMA" not in asked and "console" not in asked, out
    assert asked.split(": ", 1)[1] == ", ".join(serial_ports()) or asked.endswith("name a port with --serial DEVICE)")
    assert "networks asked: 10.99.0.0/24 port 9100" in out, out
    assert "Traceback" not in out
