-- pretix_lease: take or keep the lease of the one sync process that sends the outbox to pretix.
-- flags: allow-oom
-- KEYS pretix:sender
-- ARGV <me> <lease_ms>
-- Held by <me> or by no one: <me> holds it for <lease_ms> from now. Held by another process: nothing changes.
-- Returns {1} when <me> holds it now, or {0, <holder>, <ms it still holds it>}.
local holder = redis.call('GET', KEYS[1])
if holder and holder ~= ARGV[1] then
  return {0, holder, redis.call('PTTL', KEYS[1])}
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return {1}
