-- dead_letter: a job this printer holds can never print (unreadable, cannot be rendered): park it with the reason.
-- flags: allow-oom
-- KEYS inflight:<me> job:<id> dlq events stats
-- ARGV <id> <me> <reason> <maxlen>
-- Returns {"dead"} or {"not_owner"}.
local id, me, reason = ARGV[1], ARGV[2], ARGV[3]
if redis.call('LREM', KEYS[1], 0, id) == 0 then
  return {'not_owner'}
end
to_dlq(KEYS[2], KEYS[3], KEYS[5], KEYS[4], ARGV[4], id, me, reason, now_ms())
return {'dead'}
