"""The errors a user can cause, each turned into a clear message (never a traceback) at the CLI boundary."""

from __future__ import annotations

from core.logs import shown

#: Exit status for "cannot start: fix the configuration" (sysexits EX_CONFIG). systemd's RestartPreventExitStatus=
#: uses it so a broken config does not restart in a loop.
EXIT_CONFIG = 78


#: A config with a thousand mistakes is one mistake (the wrong file): the first ones say which.
MAX_SHOWN_PROBLEMS = 20


class UserError(Exception):
    """Something the person running badge-agent can fix; the message says what."""


class ConfigError(UserError):
    """A config file is unreadable or invalid. ``problems`` lists "field: what is wrong" lines."""

    def __init__(self, path: str, problems: list[str]) -> None:
        self.path = path
        self.problems = problems
        super().__init__(f"{path}: " + ("; ".join(problems) if len(problems) == 1 else f"{len(problems)} problems"))

    def render(self) -> str:
        """The file and its problems, at most ``MAX_SHOWN_PROBLEMS`` of them (then how many were not shown)."""
        lines = [f"config error in {self.path}:"]
        # shown: a key or value quoted from the file may hold terminal escapes, or be a megabyte long.
        lines += [f"  {shown(p, 300)}" for p in self.problems[:MAX_SHOWN_PROBLEMS]]
        hidden = len(self.problems) - MAX_SHOWN_PROBLEMS
        if hidden > 0:
            lines.append(f"  ... {hidden} more not shown")
        return "\n".join(lines)


class JobError(UserError):
    """A badge job is not acceptable (missing field, too large, not UTF-8, bad id)."""
