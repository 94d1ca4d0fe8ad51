"""What tests share: waiting for a condition, running agents, reading print logs and metrics. Test modules import
from here (and use the fixtures of tests/conftest.py), never from one another."""
