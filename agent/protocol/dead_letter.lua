-- dead_letter: a job this printer holds can never print (unreadable, cannot be rendered): park it with the reason.
-- KEYS[1] inflight:<me>   KEYS[2] job:<id>   KEYS[3] dlq   KEYS[4] events   KEYS[5] stats
-- ARGV[1] job_id   ARGV[2] me   ARGV[3] reason   ARGV[4] events maxlen
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
