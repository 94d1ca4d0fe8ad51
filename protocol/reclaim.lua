-- reclaim: take back everything a dead printer's agent held and hand it on: a job of a zone to another of the zone's
-- printers that can print (the fewest jobs ahead first), any other, or when none of its zone can print, to the front
-- of the pool.
-- flags: allow-oom
-- KEYS hb inflight:<victim> q:<victim> pool health:<victim> events stats printers pinned [job:<held> done:<held>] [job:<id>... zone-keys...]
-- ARGV <victim> <dead_after_ms> <held> <by> <maxlen> <dead_ttl_ms> <zone_dead_after_ms> <count> [<id>... <zone-printer>...]
-- <held>: the victim's in-flight list as the caller read it (LRANGE, newest first), its ids joined by spaces: one job,
-- or two where the next badge waited at the printer while one printed (docs/printers.md); "" for none. Each held
-- job's two keys follow the first nine, in that order (a second held job's after the first's).
-- <dead_after_ms> is "force" to skip the staleness check; <dead_ttl_ms>: how long the "dead" health is kept;
-- <zone_dead_after_ms>: how old a zone printer's beat may be for it to count as able to print (can_print). <count>
-- ids: the victim's pinned queue as the caller read it, with their job keys, then the zone printers named, as
-- handback's.
-- Staleness is re-checked here, atomically, so a peer that beat since the sweep is left alone. Running it twice,
-- or from two agents at once, moves nothing twice: the second run finds the victim out of the heartbeat set.
-- Returns {"alive"}, {"gone"} (already reclaimed), {"retry"} (the held job or the queue changed since the caller
-- looked), {"zones", printer...} (their keys are needed: nothing changed), or {"reclaimed", held ids (as <held>),
-- pinned jobs moved, jobs handed to zone printers}.
local victim, held_arg, by = ARGV[1], ARGV[3], ARGV[4]
local now = now_ms()
local last = redis.call('ZSCORE', KEYS[1], victim)
if ARGV[2] ~= 'force' then
  if not last then
    return {'gone'}
  end
  if now - tonumber(last) < tonumber(ARGV[2]) then
    return {'alive'}
  end
end
local held_ids = redis.call('LRANGE', KEYS[2], 0, -1)
if table.concat(held_ids, ' ') ~= held_arg then
  return {'retry'}
end
local held_jobs = {}
for i = 1, #held_ids do
  held_jobs[i] = KEYS[8 + 2 * i]
end
local plan, answer = hand_on_plan(KEYS, ARGV, KEYS[3], 10 + 2 * #held_ids, 8, victim, held_jobs)
if not plan then
  return answer
end
local location = redis.call('HGET', KEYS[8], victim) or ''
local where = victim .. ' (' .. location .. ')'
-- Pinned jobs first, so that the held jobs, pushed last (the oldest, the one the printer started, last of all), end up
-- the very next ones taken.
local pooled, zoned = queue_hand_on(KEYS[3], plan, KEYS[4], KEYS[9], victim, now, ARGV[7])
local pinned = pooled + zoned
for i, held in ipairs(held_ids) do
  local job, done = KEYS[8 + 2 * i], KEYS[9 + 2 * i]
  -- An id listed twice (pushed by hand) is handed on once.
  if redis.call('LREM', KEYS[2], 0, held) > 0 and redis.call('EXISTS', done) == 0 then
    local state = redis.call('HGET', job, 'state')
    local maybe = 0
    if state == 'printing' then
      -- It may be on paper at the dead printer (printing, or waiting there behind the one that printed): say where,
      -- so a later print elsewhere is flagged for staff.
      maybe = 1
      local prior = redis.call('HGET', job, 'maybe_printed_where') or ''
      if prior == '' then prior = where elseif not string.find(prior, where, 1, true) then prior = prior .. '; ' .. where end
      redis.call('HSET', job, 'maybe_printed', 1, 'maybe_printed_where', prior)
    end
    local to = hand_on(job, held, plan.held_zones[job], KEYS[4], KEYS[9], plan.peers, victim, now, ARGV[7])
    if to and to ~= '' then
      zoned = zoned + 1
    end
    -- A job for the dead printer alone was ended (cancelled) by hand_on, not handed on: it stays so.
    if state and to then
      redis.call('HSET', job, 'state', 'queued', 'printer', '')
      bump(job, 'reclaims', 1, KEYS[6], ARGV[5])
    end
    bump(KEYS[7], 'reclaimed', 1, KEYS[6], ARGV[5])
    event(KEYS[6], ARGV[5], 'event', 'reclaimed', 'job_id', held, 'printer', victim, 'location', location, 'by', by,
      'maybe_printed', maybe, 'to', to or '', 'reason', 'agent of ' .. where .. ' stopped beating')
  end
end
redis.call('ZREM', KEYS[1], victim)
redis.call('SET', KEYS[5], cjson.encode({state = 'dead', location = location, reclaimed_by = by, reclaimed_ms = now,
  reasons = {'no heartbeat; work handed to peers'}}), 'PX', ARGV[6])
event(KEYS[6], ARGV[5], 'event', 'agent_dead', 'printer', victim, 'location', location, 'by', by, 'handed_back', pinned,
  'to_zone', zoned, 'held', held_arg,
  'reason', 'no heartbeat for ' .. (last and (now - tonumber(last)) or '?') .. ' ms')
return {'reclaimed', held_arg, pinned, zoned}
