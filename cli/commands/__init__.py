"""Fleet commands of the CLI, one module per area, imported only when their command is run or listed.

``badge-agent run`` is the daemon on every Pi: it must not pay for rich, the demo or the board (about 4 MB of a
resident set the venue's smallest machines share with the OS), so the group knows these commands by name and
imports a module only when one of its commands is asked for (``--help`` lists them all, importing them all).
"""

from __future__ import annotations

import importlib

import click

#: command name -> (module under cli.commands, attribute holding the click command)
LAZY_COMMANDS: dict[str, tuple[str, str]] = {
    "enqueue": ("enqueue", "enqueue"),
    "status": ("status", "status"),
    "job": ("status", "job"),
    "events": ("status", "events"),
    "demo": ("demo", "demo"),
    "drain": ("ops", "drain"),
    "reclaim": ("ops", "reclaim"),
    "dlq": ("ops", "dlq"),
    "roll": ("roll", "roll"),
    "sim": ("sim", "sim"),
    "board": ("board", "board"),
    "acl": ("acl", "acl"),
    "functions": ("functions", "functions"),
    # staff operations and the intake service (intake/)
    "reprint": ("staff", "reprint"),
    "cancel": ("staff", "cancel"),
    "intake": ("intake", "intake"),
    # the attendee list (attendees/)
    "attendees": ("attendees", "attendees"),
    # setting up a printer at the venue
    "detect": ("detect", "detect"),
    "preview": ("printing", "preview"),
    "test-print": ("printing", "test_print"),
    "setup": ("setup", "setup"),
    # badges printed before the doors open (preprint/)
    "preprint": ("preprint", "preprint"),
    # the venue's badge layouts (layouts/)
    "layout": ("layout", "layout"),
    # the venue's webhooks and their sender (webhooks/)
    "webhooks": ("webhooks", "webhooks"),
}


class LazyGroup(click.Group):
    """A click group whose fleet commands are imported on first use (see the module's docstring)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *LAZY_COMMANDS})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        command = super().get_command(ctx, cmd_name)
        if command is not None or cmd_name not in LAZY_COMMANDS:
            return command
        module_name, attr = LAZY_COMMANDS[cmd_name]
        module = importlib.import_module(f"cli.commands.{module_name}")
        loaded = getattr(module, attr)
        if not isinstance(loaded, click.Command):
            raise TypeError(f"cli.commands.{module_name}.{attr} is not a click command")
        self.add_command(loaded, cmd_name)
        return loaded
