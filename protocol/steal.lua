-- steal: an idle printer takes the oldest job pinned to another printer once it has waited affinity_wait. A job of a
-- zone (its hash's zone_printers) goes to a printer outside its zone only when none of the zone's printers can print
-- (can_print); a printer of the zone takes it as any pinned job.
-- flags: allow-oom
-- KEYS q:<owner> inflight:<me> job:<id> events ctl:<me> pinned [zone-keys...]
-- ARGV <me> <owner> <id> <affinity_ms> <maxlen> <dead_after_ms> [<zone-printer>...]
-- <id>: the caller saw it in the pinned index; it must be the oldest in q:<owner>. The zone printers named each have
-- four keys at the end of KEYS (zone_peers); <dead_after_ms>: how old a zone printer's beat may be for it to count.
-- Returns {"stolen", id}, or {"no", why}: busy, drained (we hold a job or are drained), young (not old enough), moved
-- (no longer oldest in q:<owner>), stale (not in q:<owner> at all: someone edited the queue by hand; the index entry
-- is dropped, so one hand edit cannot make every idle look try it again), zone (a printer of its zone can print it),
-- only (a job for its printer alone, as a test badge: never stolen), or zones followed by the printers of its zone
-- whose keys the caller must give (nothing changed).
local id, me = ARGV[3], ARGV[1]
local member = pinned_member(ARGV[2], id)
if redis.call('LLEN', KEYS[2]) > 0 then
  return {'no', 'busy'}
end
if redis.call('GET', KEYS[5]) == 'drain' then
  return {'no', 'drained'}
end
if redis.call('LINDEX', KEYS[1], -1) ~= id then
  if not redis.call('LPOS', KEYS[1], id) then
    redis.call('ZREM', KEYS[6], member)
    return {'no', 'stale'}
  end
  return {'no', 'moved'}
end
local only = redis.pcall('HGET', KEYS[3], 'only')
if type(only) == 'string' and only ~= '' then
  return {'no', 'only'}
end
local now = now_ms()
-- An enqueued_ms that is not a whole number (HSET by hand or by a role user) counts as waiting since ever: the job is
-- taken, and the taker's begin dead-letters it with the field named (job_fault), where failing here would stop us.
local since = int_of(redis.call('HGET', KEYS[3], 'enqueued_ms'), now) or 0
if now - since < tonumber(ARGV[4]) then
  return {'no', 'young'}
end
local zone = zone_of(KEYS[3])
local outsider = false
if zone then
  outsider = true
  for _, name in ipairs(zone) do
    if name == me then
      outsider = false
    end
  end
end
if outsider then
  local peers = zone_peers(KEYS, ARGV, 7)
  local missing = {names = {}}
  zone_missing(zone, peers, me, missing)
  if #missing.names > 0 then
    return {'no', 'zones', unpack(missing.names)}
  end
  for _, name in ipairs(zone) do
    if can_print(peers[name], now, ARGV[6]) then
      return {'no', 'zone'}
    end
  end
end
redis.call('LMOVE', KEYS[1], KEYS[2], 'RIGHT', 'LEFT')
redis.call('ZREM', KEYS[6], member)
local reason = 'waited ' .. (now - since) .. ' ms for ' .. ARGV[2]
if outsider then
  reason = reason .. '; no printer of zone ' .. (redis.call('HGET', KEYS[3], 'zone') or '') .. ' can print'
end
event(KEYS[4], ARGV[5], 'event', 'stolen', 'job_id', id, 'printer', me, 'from', ARGV[2], 'reason', reason)
return {'stolen', id}
