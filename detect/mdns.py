"""Network printers that announce themselves over mDNS/DNS-SD (Bonjour, Avahi): their addresses and raw ports.

Zebra, Brother and Epson network printers announce ``_pdl-datastream._tcp`` (raw printing; its port is the raw
port, usually 9100) and most also ``_printer._tcp`` (LPD) and ``_ipp._tcp`` (IPP). For the last two the announced
port is not a raw port, so those hosts are asked on 9100 like any other. ``_ipp._tcp`` and ``_ipps._tcp`` are also
IPP printers in their own right (IPP Everywhere, AirPrint, a shared CUPS queue): :func:`browse_all` gives each as
the printer URI its announcement names (address, port and the TXT record's ``rp``, the resource path), for
detect/ipp.py to ask. A short browse window is enough: a printer answers the browse query within a few
hundred milliseconds.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass

from zeroconf import DNSQuestionType, InterfaceChoice, IPVersion, ServiceStateChange, Zeroconf
from zeroconf.asyncio import AsyncServiceBrowser, AsyncServiceInfo, AsyncZeroconf

from detect.network import RAW_PORT

log = logging.getLogger(__name__)

RAW_SERVICE = "_pdl-datastream._tcp.local."
IPP_SERVICE, IPPS_SERVICE = "_ipp._tcp.local.", "_ipps._tcp.local."
SERVICE_TYPES = (RAW_SERVICE, "_printer._tcp.local.", IPP_SERVICE, IPPS_SERVICE)


@dataclass(frozen=True)
class Announced:
    """One printer's announcement: its instance name (what the printer calls itself) and where to ask it."""

    name: str
    host: str
    port: int
    #: For an IPP announcement (:func:`browse_all`'s second list): the printer URI it names; "" for a raw port.
    uri: str = ""


def _instance(full_name: str, service_type: str) -> str:
    return full_name.removesuffix("." + service_type)


def _ipp_uri(service_type: str, address: str, port: int, properties: dict[bytes, bytes | None]) -> str:
    scheme = "ipps" if service_type == IPPS_SERVICE else "ipp"
    path = (properties.get(b"rp") or b"ipp/print").decode("utf-8", "replace").strip("/")
    return f"{scheme}://{address}:{port}/{path}"


async def browse(window: float = 1.0, interfaces: list[str] | None = None) -> list[Announced]:
    """Every printer announced within ``window`` seconds, one entry per (address, raw port), sorted."""
    return (await browse_all(window, interfaces))[0]


async def browse_all(
    window: float = 1.0, interfaces: list[str] | None = None
) -> tuple[list[Announced], list[Announced]]:
    """Every printer announced within ``window`` seconds: one entry per (address, raw port), sorted; and one per
    IPP printer URI announced (``_ipp``, ``_ipps``), sorted.

    ``interfaces`` are the addresses to browse on (None: every interface of the machine). A machine where mDNS
    cannot run (no multicast route, port 5353 refused) gives [] and a warning, never an error: the subnet scan
    still runs.
    """
    names: list[tuple[str, str]] = []

    def seen(zeroconf: Zeroconf, service_type: str, name: str, state_change: ServiceStateChange) -> None:
        if state_change is not ServiceStateChange.Removed and (service_type, name) not in names:
            names.append((service_type, name))

    try:
        zc = AsyncZeroconf(
            interfaces=InterfaceChoice.All if interfaces is None else interfaces, ip_version=IPVersion.V4Only
        )
    except OSError as exc:
        log.warning("mDNS browse skipped: %s", exc)
        return [], []
    found: dict[tuple[str, int], Announced] = {}
    ipp: dict[str, Announced] = {}
    try:
        # Every question asks for a multicast answer (QM). zeroconf's default first question asks for a unicast
        # one (QU), which the kernel hands to just one of the sockets on port 5353: on a machine that runs another
        # mDNS stack (avahi-daemon on Raspberry Pi OS, a second zeroconf) often not ours, and the printer is then
        # seen only after the second question, a second later, past the window.
        browser = AsyncServiceBrowser(
            zc.zeroconf, list(SERVICE_TYPES), handlers=[seen], question_type=DNSQuestionType.QM
        )
        await asyncio.sleep(window)
        await browser.async_cancel()
        infos = [AsyncServiceInfo(t, n) for t, n in names]
        # Resolving asks for the SRV and A records the browse answer did not carry; all at once, bounded.
        await asyncio.gather(
            *(i.async_request(zc.zeroconf, max(window, 0.5) * 1000, DNSQuestionType.QM) for i in infos)
        )
        raw_hosts = {a for i in infos if i.type == RAW_SERVICE for a in i.parsed_addresses(IPVersion.V4Only)}
        for info in sorted(infos, key=lambda i: i.type != RAW_SERVICE):
            for address in info.parsed_addresses(IPVersion.V4Only):
                if info.type in (IPP_SERVICE, IPPS_SERVICE) and info.port:
                    uri = _ipp_uri(info.type, address, info.port, info.properties)
                    ipp.setdefault(uri, Announced(_instance(info.name, info.type), address, info.port, uri))
                if info.type == IPPS_SERVICE:
                    continue  # its host is asked on 9100 for its _ipp announcement, if any
                if info.type == RAW_SERVICE and info.port:
                    port = info.port
                elif address in raw_hosts:
                    continue  # its raw-service announcement named the real port; no 9100 guess beside it
                else:
                    port = RAW_PORT
                found.setdefault((address, port), Announced(_instance(info.name, info.type), address, port))
    except OSError as exc:
        log.warning("mDNS browse failed: %s", exc)
    finally:
        with contextlib.suppress(OSError):
            await zc.async_close()
    return sorted(found.values(), key=lambda a: (a.host, a.port)), sorted(ipp.values(), key=lambda a: a.uri)
