-- sweep: at most one agent per interval looks for dead peers (a short lease), and gets their names.
-- flags: allow-oom
-- KEYS hb sweep
-- ARGV <me> <dead_after_ms> <lease_ms> <limit>
-- Returns the printers whose last beat is older than the dead-after window (oldest first), or false when another
-- agent holds the lease. O(log N + M) on the heartbeat set.
if not redis.call('SET', KEYS[2], ARGV[1], 'NX', 'PX', ARGV[3]) then
  return false
end
local now = now_ms()
return redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', '(' .. (now - tonumber(ARGV[2])), 'LIMIT', 0, ARGV[4])
