-- release: hand a job this printer holds back to the front of the pool (or to the DLQ when out of attempts).
-- KEYS inflight:<me> job:<id> done:<id> pool dlq events stats
-- ARGV <id> <me> <location> <outcome> <reason> <max_attempts> <maxlen>
-- <outcome>: failed | unknown | unsent.
-- "unknown" marks the job maybe_printed and records where; "unsent" (nothing reached the printer) does not count
-- as an attempt. Returns {"released"}, {"dead"}, {"done"} (was already printed) or {"not_owner"}.
local id, me, loc, outcome, reason = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5]
if not redis.call('LPOS', KEYS[1], id) then
  return {'not_owner'}
end
redis.call('LREM', KEYS[1], 0, id)
if redis.call('EXISTS', KEYS[3]) == 1 then
  return {'done'}
end
if outcome == 'unknown' then
  local where = redis.call('HGET', KEYS[2], 'maybe_printed_where') or ''
  local here = me .. ' (' .. loc .. ')'
  if where == '' then where = here elseif not string.find(where, here, 1, true) then where = where .. '; ' .. here end
  redis.call('HSET', KEYS[2], 'maybe_printed', 1, 'maybe_printed_where', where)
elseif outcome == 'unsent' then
  if tonumber(redis.call('HGET', KEYS[2], 'attempts') or '0') > 0 then
    redis.call('HINCRBY', KEYS[2], 'attempts', -1)
  end
end
local attempts = tonumber(redis.call('HGET', KEYS[2], 'attempts') or '0')
if outcome ~= 'unsent' and attempts >= tonumber(ARGV[6]) then
  local why = 'gave up after ' .. attempts .. ' attempts; last: ' .. reason
  to_dlq(KEYS[2], KEYS[5], KEYS[7], KEYS[6], ARGV[7], id, me, why, now_ms(), 'location', loc)
  return {'dead'}
end
-- Agents take from the right: RPUSH makes it the very next job any printer takes.
redis.call('RPUSH', KEYS[4], id)
redis.call('HSET', KEYS[2], 'state', 'queued', 'printer', '', 'last_error', reason)
redis.call('HINCRBY', KEYS[7], 'released', 1)
event(KEYS[6], ARGV[7], 'event', 'released', 'job_id', id, 'printer', me, 'location', loc, 'outcome', outcome, 'reason', reason)
return {'released'}
