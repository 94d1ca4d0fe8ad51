-- dead_letter: a job this printer holds can never print (unreadable, cannot be rendered): park it with the reason.
-- KEYS inflight:<me> job:<id> dlq events stats
-- ARGV <id> <me> <reason> <maxlen>
-- Returns {"dead"} or {"not_owner"}.
local id, me, reason = ARGV[1], ARGV[2], ARGV[3]
if redis.call('LREM', KEYS[1], 0, id) == 0 then
  return {'not_owner'}
end
local now = now_ms()
redis.call('LPUSH', KEYS[3], id)
redis.call('HSET', KEYS[2], 'state', 'dead', 'error', reason, 'printer', me, 'dead_ms', now)
redis.call('HINCRBY', KEYS[5], 'dead', 1)
redis.call('XADD', KEYS[4], 'MAXLEN', '~', ARGV[4], '*', 'event', 'dead', 'job_id', id, 'printer', me,
  'reason', reason)
return {'dead'}
