"""Fleet commands of the CLI, one module per area."""

from __future__ import annotations

import click


def register(group: click.Group) -> None:
    from agent.commands import acl, board, demo, enqueue, ops, sim, status

    group.add_command(enqueue.enqueue)
    group.add_command(status.status)
    group.add_command(status.job)
    group.add_command(status.events)
    group.add_command(demo.demo)
    group.add_command(ops.drain)
    group.add_command(ops.reclaim)
    group.add_command(ops.dlq)
    group.add_command(sim.sim)
    group.add_command(board.board)
    group.add_command(acl.acl)
