"""``python -m drivers.emulators KIND [options]``: one emulated printer until Ctrl-C, the same as ``badge-agent sim``
(the options are that command's)."""

from cli.commands.sim import sim

sim(prog_name="python -m drivers.emulators")
