"""The pretix sync's scripts: each a function of the venue's library with a spec, its header naming the KEYS and
ARGV the spec sends, every key under the venue's hash tag."""

from __future__ import annotations

from importlib import resources

from pretix_sync import specs
from pretix_sync.keys import PretixKeys
from protocol.codec import dec
from protocol.library import default_library
from protocol.scripts import plain_source


def _header(source: str, field: str) -> list[str]:
    (line,) = [line for line in source.splitlines() if line.startswith(f"-- {field} ")]
    return line.split()[2:]


def test_every_script_has_a_spec_and_its_header_matches_what_the_spec_sends() -> None:
    k = PretixKeys("v")
    calls = {
        "pretix_lease": specs.LEASE.call(k, "<me>", 1000),
        "pretix_sent": specs.SENT.call(k, "<me>", "<entry_id>"),
        "pretix_pump": specs.PUMP.call(k, 200),
    }
    files = {p.name.removesuffix(".lua") for p in resources.files("pretix_sync").iterdir() if p.name.endswith(".lua")}
    assert files == {spec.name for spec in specs.SPECS} == set(calls)
    assert files <= set(default_library().scripts)
    for name, (spec, keys, args) in calls.items():
        source = plain_source(name)
        assert spec.name == name
        assert [dec(key).removeprefix("badge:{v}:") for key in keys] == _header(source, "KEYS"), name
        assert len(args) == len(_header(source, "ARGV")), name
        assert [dec(a) for a in args if isinstance(a, bytes) and a.startswith(b"<")] == [
            t for t in _header(source, "ARGV") if t in {"<me>", "<entry_id>"}
        ], name
