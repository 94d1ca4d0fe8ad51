"""Find the printers this machine reaches and ask each what it is, without printing anything."""

from drivers.detect.identify import Found, identify
from drivers.detect.network import probe_hosts

__all__ = ["Found", "identify", "probe_hosts"]
