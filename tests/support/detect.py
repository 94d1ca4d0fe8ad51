"""What the detect tests share."""

from __future__ import annotations

from cli.commands.detect import Scanners

#: Every CLI test stays on this machine: no subnet scan, mDNS only on loopback.
LOOPBACK = Scanners(serial_ports=list, subnets=list, mdns_interfaces=["127.0.0.1"])
