"""Find the printers this machine reaches and ask each what it is, without printing anything."""

from detect.identify import Found, identify
from detect.network import probe_hosts
from detect.scan import detect_all

__all__ = ["Found", "detect_all", "identify", "probe_hosts"]
