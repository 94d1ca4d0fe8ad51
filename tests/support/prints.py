"""Reading what the simulated printers printed: their print logs (``<name>.prints.jsonl``, drivers/sim.py), read as
the benches read them."""

from bench.common import print_log_copies, printed_lines

__all__ = ["print_log_copies", "printed_lines"]
