"""The intake service: desks and kiosks put badge jobs in over HTTP, without Redis credentials (docs/intake.md)."""
