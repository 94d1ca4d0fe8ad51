"""The errors a user can cause, each turned into a clear message (never a traceback) at the CLI boundary."""

from __future__ import annotations

#: Exit status for "cannot start: fix the configuration" (sysexits EX_CONFIG). systemd's RestartPreventExitStatus=
#: uses it so a broken config does not restart in a loop.
EXIT_CONFIG = 78


class UserError(Exception):
    """Something the person running badge-agent can fix; the message says what."""


class ConfigError(UserError):
    """A config file is unreadable or invalid. ``problems`` lists "field: what is wrong" lines."""

    def __init__(self, path: str, problems: list[str]) -> None:
        self.path = path
        self.problems = problems
        super().__init__(f"{path}: " + ("; ".join(problems) if len(problems) == 1 else f"{len(problems)} problems"))

    def render(self) -> str:
        lines = [f"config error in {self.path}:"]
        lines += [f"  {p}" for p in self.problems]
        return "\n".join(lines)


class JobError(UserError):
    """A badge job is not acceptable (missing field, too large, not UTF-8, bad id)."""
