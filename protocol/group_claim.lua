-- group_claim: a ready printer with nothing of its own left claims a waiting group whole: the group's jobs move, in
-- order, into its gq:<me> (take serves them after its pinned queue and the pool), out of reach of steal (not in the
-- pinned index), until it confirms them all or dies (group_back hands the rest on whole).
-- flags: allow-oom
-- KEYS groups group:<gid> group:<gid>:q gq:<me> gclaim:<me> ctl:<me> events
-- ARGV <me> <gid> <maxlen>
-- Returns {"claimed", jobs}, or {"no", why}: drained, busy (gq:<me> still holds jobs), gone (not waiting any more),
-- printers (this printer may not claim it), empty (it had no job left: dropped from the list).
local me, gid = ARGV[1], ARGV[2]
if redis.call('GET', KEYS[6]) == 'drain' then
  return {'no', 'drained'}
end
if redis.call('LLEN', KEYS[4]) > 0 then
  return {'no', 'busy'}
end
if not redis.call('LPOS', KEYS[1], gid) then
  return {'no', 'gone'}
end
local allowed = redis.call('HGET', KEYS[2], 'printers') or ''
if allowed ~= '' then
  local found = false
  for name in string.gmatch(allowed, '%S+') do
    if name == me then found = true end
  end
  if not found then
    return {'no', 'printers'}
  end
end
redis.call('LREM', KEYS[1], 0, gid)
local count = redis.call('LLEN', KEYS[3])
if count == 0 then
  return {'no', 'empty'}
end
-- The whole list at once (O(1)): gq:<me> is empty, checked above.
redis.call('RENAME', KEYS[3], KEYS[4])
redis.call('SET', KEYS[5], gid)
redis.call('HSET', KEYS[2], 'state', 'claimed', 'printer', me, 'claimed_ms', now_ms())
event(KEYS[7], ARGV[3], 'event', 'group_claimed', 'group', gid, 'printer', me, 'count', count)
return {'claimed', count}
