"""What the detect tests share."""

from __future__ import annotations

from cli.commands.detect import Scanners

#: Every CLI test stays on this machine: no subnet scan, mDNS only on loopback, and no IPP asked of port 631 or of a
#: CUPS server the machine may run (a test names its own ippeveprinter or cupsd instead).
LOOPBACK = Scanners(serial_ports=list, subnets=list, mdns_interfaces=["127.0.0.1"], ipp_port=None, cups=None)
