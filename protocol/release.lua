-- release: hand a job this printer holds back to the front of the pool (or to the DLQ when out of attempts); a job
-- of a zone to the front of the queue of another of its zone's printers that can print, when one can (hand_on).
-- flags: allow-oom
-- KEYS inflight:<me> job:<id> done:<id> pool dlq events stats pinned gq:<me> [zone-keys...]
-- ARGV <id> <me> <location> <outcome> <reason> <max_attempts> <maxlen> <dead_after_ms> [<zone-printer>...]
-- <outcome>: failed | unknown | unsent. The zone printers named each have four keys at the end of KEYS (zone_peers);
-- <dead_after_ms>: how old a zone printer's beat may be for it to count as able to print.
-- "unknown" marks the job maybe_printed and records where; "unsent" (nothing reached the printer) does not count
-- as an attempt. A job for this printer alone (its hash's "only") is cancelled instead of handed on (hand_on). Returns {"released", printer it went to or ""}, {"dead"}, {"done"} (was already printed),
-- {"not_owner"}, or {"zones", printer...} (a job of a zone: their keys are needed; nothing changed).
local id, me, loc, outcome, reason = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5]
if not redis.call('LPOS', KEYS[1], id) then
  return {'not_owner'}
end
local zone = zone_of(KEYS[2])
local peers = zone_peers(KEYS, ARGV, 9)
if zone then
  local missing = {names = {}}
  zone_missing(zone, peers, me, missing)
  if #missing.names > 0 then
    return {'zones', unpack(missing.names)}
  end
end
redis.call('LREM', KEYS[1], 0, id)
if redis.call('EXISTS', KEYS[3]) == 1 then
  return {'done'}
end
-- Read before the job is written: attempts that are not a whole number (HSET by hand or by a role user) would fail
-- this step every time and stop this printer; the job is dead-lettered with the field named instead.
local held = redis.call('HGET', KEYS[2], 'attempts')
if not int_of(held, 0) then
  to_dlq(KEYS[2], KEYS[5], KEYS[7], KEYS[6], ARGV[7], id, me, bad_value(KEYS[2], 'attempts', held, 'a whole number'),
    now_ms(), 'location', loc)
  bump(KEYS[7], 'integrity_fault', 1, KEYS[6], ARGV[7])
  return {'dead'}
end
if outcome == 'unknown' then
  local where = redis.call('HGET', KEYS[2], 'maybe_printed_where') or ''
  local here = me .. ' (' .. loc .. ')'
  if where == '' then where = here elseif not string.find(where, here, 1, true) then where = where .. '; ' .. here end
  redis.call('HSET', KEYS[2], 'maybe_printed', 1, 'maybe_printed_where', where)
elseif outcome == 'unsent' then
  if int_of(held, 0) > 0 then
    redis.call('HINCRBY', KEYS[2], 'attempts', -1)
  end
end
local attempts = int_of(redis.call('HGET', KEYS[2], 'attempts'), 0)
if outcome ~= 'unsent' and attempts >= tonumber(ARGV[6]) then
  local why = 'gave up after ' .. attempts .. ' attempts; last: ' .. reason
  to_dlq(KEYS[2], KEYS[5], KEYS[7], KEYS[6], ARGV[7], id, me, why, now_ms(), 'location', loc)
  return {'dead'}
end
-- A job of a claimed group (a box) goes back to the front of this printer's rest of the group, not to the pool: the
-- box stays whole and in order here (group_back hands it on whole if this printer cannot print again in time).
local group = redis.pcall('HGET', KEYS[2], 'group')
if type(group) == 'string' and group ~= '' then
  redis.call('RPUSH', KEYS[9], id)
  redis.call('HSET', KEYS[2], 'state', 'queued', 'printer', '', 'last_error', reason)
  bump(KEYS[7], 'released', 1, KEYS[6], ARGV[7])
  event(KEYS[6], ARGV[7], 'event', 'released', 'job_id', id, 'printer', me, 'location', loc, 'outcome', outcome,
    'reason', reason, 'to', me)
  return {'released', me}
end
-- Agents take from the right: RPUSH makes it the very next job any printer (or its zone printer) takes.
-- Server time only for a zone's job (can_print judges beats by it): a job of no zone costs no TIME.
local to = hand_on(KEYS[2], id, zone, KEYS[4], KEYS[8], peers, me, zone and now_ms() or 0, ARGV[8])
if not to then
  -- A badge for this printer alone: hand_on ended it (cancelled); no other printer may print it.
  event(KEYS[6], ARGV[7], 'event', 'cancelled', 'job_id', id, 'by', me, 'printer', me, 'outcome', outcome,
    'reason', reason)
  return {'released', ''}
end
redis.call('HSET', KEYS[2], 'state', 'queued', 'printer', '', 'last_error', reason)
bump(KEYS[7], 'released', 1, KEYS[6], ARGV[7])
event(KEYS[6], ARGV[7], 'event', 'released', 'job_id', id, 'printer', me, 'location', loc, 'outcome', outcome, 'reason', reason,
  'to', to)
return {'released', to}
