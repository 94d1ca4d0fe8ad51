-- reflag: this printer's attempt at a job ended with an unknown outcome (release.lua marked it maybe printed here),
-- and the master moved since: a failover to a replica that had not received that release lost the flag. Flag the job
-- again from the agent's journal, as release.lua did (agent/recovery.py, after a master move).
-- flags: allow-oom
-- KEYS job:<id> events stats
-- ARGV <id> <me> <location> <epoch> <maxlen>
-- <epoch>: the epoch the unknown attempt was begun under.
-- Returns {"flagged"} (maybe printed here, now on the record), {"duplicate", printer} (already printed elsewhere or
-- under another epoch: the copy there is a second one, flagged maybe_duplicate), or {"unchanged"} (no such job, an
-- attempt of an earlier reprint round, printed by this very attempt, or flagged with this place already).
local id, me, loc, epoch = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
if redis.call('TYPE', KEYS[1])['ok'] ~= 'hash' then
  return {'unchanged'}  -- gone (a failover to a replica from before its enqueue), or not a job record: nothing to mark
end
local job = redis.call('HMGET', KEYS[1], 'state', 'printer', 'printed_epoch', 'round_epoch', 'maybe_printed_where',
  'printed_at')
-- An attempt from before the job's latest reprint round (reprint.lua) is no copy of this round.
-- A round_epoch that is not a whole number (HSET by hand or by a role user) counts as none, as confirm counts it.
if tonumber(epoch) <= (int_of(job[4], 0) or 0) then
  return {'unchanged'}
end
local printed = job[1] == 'printed'
if printed and job[2] == me and job[3] == epoch then
  return {'unchanged'}
end
local here = me .. ' (' .. loc .. ')'
local where = job[5] or ''
if string.find(where, here, 1, true) then
  return {'unchanged'}  -- flagged already (Redis kept the release, or a reflag ran before): changes nothing
end
if where == '' then where = here else where = where .. '; ' .. here end
redis.call('HSET', KEYS[1], 'maybe_printed', 1, 'maybe_printed_where', where)
if not printed then
  return {'flagged'}
end
-- Confirmed by another print while this attempt's flag was lost: that copy may be a second one, flagged as
-- confirm.lua does.
redis.call('HSET', KEYS[1], 'maybe_duplicate', 1)
bump(KEYS[3], 'maybe_duplicate', 1, KEYS[2], ARGV[5])
event(KEYS[2], ARGV[5], 'event', 'maybe_duplicate', 'job_id', id, 'printer', job[2] or '', 'location', job[6] or '',
  'reason', 'an earlier attempt may also have printed: look at ' .. here)
return {'duplicate', job[2] or ''}
