"""The venue protocol: how every process shares a venue's badge jobs in Redis, and nothing about any one process.

The key layout (``keys``); one Lua script per atomic step and the functions library they form (``library``); each
call's KEYS, ARGV and reply (``specs``, ``replies``) and the client that runs them (``scripts``, ``store``); the job
format and its checks (``jobs``); the Redis connection and its ``redis:`` config section (``connection``,
``redis_config``); and what the agents, the intake, the board and the CLI read back: the fleet, a job's story and
the event log (``fleet``), an agent's published snapshot (``state``), staff's steps in words and cancelling a
token's jobs (``staff``), and the words staff read everywhere (``vocabulary``). It builds on core/ and knows no
process above it (docs/design.md).
"""
