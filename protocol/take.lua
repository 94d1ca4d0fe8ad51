-- take: move the next job into this printer's in-flight list: its own pinned queue first, else the pool, else the
-- rest of the group it claimed (group_claim): a badge for someone waiting goes before a pre-printed box.
-- flags: allow-oom
-- KEYS q:<me> pool inflight:<me> ctl:<me> pinned gq:<me>
-- ARGV <me> [<room>]
-- <room>: how many jobs the printer may hold at once (absent: 1); 2 for a printer that takes the next badge while one
-- prints (an IPP printer's queue: docs/printers.md, "The badge waiting at the printer").
-- Returns {"held", id} when in-flight already holds as many jobs as the printer may (the newest), {"q"|"pool"|"group",
-- id} when a job was moved, {"drained", ""} when an operator drained this printer, false when the lists are empty
-- (the caller then claims a group, or blocks on BLMOVE pool).
-- Refuse a caller that passes the keys of before the pinned index: it would move a pinned job and leave it indexed.
if #KEYS < 5 or not ARGV[1] then
  return redis.error_reply('take: needs KEYS[5] pinned and ARGV[1] the printer (Store.take)')
end
if redis.call('GET', KEYS[4]) == 'drain' then
  return {'drained', ''}
end
local held = redis.call('LINDEX', KEYS[3], 0)
if held and redis.call('LLEN', KEYS[3]) >= (tonumber(ARGV[2]) or 1) then
  return {'held', held}
end
local id = redis.call('LMOVE', KEYS[1], KEYS[3], 'RIGHT', 'LEFT')
if id then
  redis.call('ZREM', KEYS[5], pinned_member(ARGV[1], id))
  return {'q', id}
end
id = redis.call('LMOVE', KEYS[2], KEYS[3], 'RIGHT', 'LEFT')
if id then
  return {'pool', id}
end
-- A group's job never waits at the printer behind another: it is taken only into an empty in-flight list, so a
-- printer holds at most one job of its group, and a release (back to the front of gq) or a hand-back (group_back)
-- keeps the box in order. A door badge may still wait behind it.
if KEYS[6] and not held then
  id = redis.call('LMOVE', KEYS[6], KEYS[3], 'RIGHT', 'LEFT')
  if id then
    return {'group', id}
  end
end
return false
