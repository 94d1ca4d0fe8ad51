"""constraints.txt pins every dependency badge-agent installs (runtime and every extra, and theirs in turn) at a
version its requirements allow, and the tests run with exactly those versions: a fresh `scripts/setup` gets what the
tests passed with."""

from __future__ import annotations

import tomllib
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[2]
#: Upper-bounded in pyproject.toml: the agent relies on more than their public API (see the comments there).
BOUNDED = ("redis", "zeroconf")


def _pins() -> dict[str, str]:
    pins: dict[str, str] = {}
    for line in (ROOT / "constraints.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, _, version = line.partition("==")
            assert version, f"constraints.txt: {line!r} is not NAME==VERSION"
            pins[canonicalize_name(name)] = version.strip()
    return pins


def _project() -> tuple[list[Requirement], dict[str, list[Requirement]]]:
    """pyproject.toml's runtime requirements and each extra's."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"].items()
    return [Requirement(r) for r in project["dependencies"]], {e: [Requirement(r) for r in rs] for e, rs in extras}


def _needed() -> dict[str, list[Requirement]]:
    """Every distribution badge-agent with all its extras needs on this machine, with what asks for it."""
    runtime, extras = _project()
    wanted: list[tuple[Requirement, str]] = [(r, "") for r in runtime]
    for extra, reqs in extras.items():
        wanted += [(r, extra) for r in reqs]
    needed: dict[str, list[Requirement]] = {}
    while wanted:
        req, extra = wanted.pop()
        if req.marker is not None and not req.marker.evaluate({"extra": extra}):
            continue
        name = canonicalize_name(req.name)
        first = name not in needed
        needed.setdefault(name, []).append(req)
        if first or req.extras:
            for sub in metadata.requires(req.name) or []:
                for sub_extra in ["", *req.extras]:
                    wanted.append((Requirement(sub), sub_extra))
    return needed


def test_constraints_pin_every_dependency_at_an_allowed_version_and_the_tests_run_with_them() -> None:
    pins, needed = _pins(), _needed()
    assert "redis" in needed and "pytest" in needed and "saq" in needed and "ifaddr" in needed  # runtime, extras, deep
    assert sorted(set(needed) - set(pins)) == [], "not pinned in constraints.txt (run scripts/pin)"
    for name, asked in needed.items():
        for req in asked:
            assert req.specifier.contains(pins[name], prereleases=True), (
                f"constraints.txt: {name}=={pins[name]} vs {req}"
            )
    installed = {name: metadata.version(name) for name in pins}
    assert installed == pins, "the tests run with other versions than constraints.txt pins (scripts/setup --dev)"


def test_redis_and_zeroconf_are_bounded_above_and_setup_installs_with_the_pins() -> None:
    runtime, _ = _project()
    bounded = {r.name: r for r in runtime if r.name in BOUNDED}
    assert sorted(bounded) == sorted(BOUNDED)
    for req in bounded.values():
        assert any(s.operator in ("<", "<=", "~=", "==") for s in req.specifier), f"{req} has no upper bound"
    installs = [line for line in (ROOT / "scripts" / "setup").read_text().splitlines() if "pip install" in line]
    assert [line for line in installs if " -e " in line and "-c constraints.txt" not in line] == [], installs
