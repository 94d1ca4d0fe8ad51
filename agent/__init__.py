"""badge-agent: keeps an event's badge printers printing."""

__version__ = "0.1.0"
