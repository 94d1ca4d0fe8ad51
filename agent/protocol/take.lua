-- take: move the next job into this printer's in-flight list: its own pinned queue first, else the pool.
-- KEYS[1] q:<me>   KEYS[2] pool   KEYS[3] inflight:<me>   KEYS[4] ctl:<me>
-- Returns {"held", id} when in-flight already holds a job (a printer holds at most one), {"q"|"pool", id} when a job
-- was moved, {"drained", ""} when an operator drained this printer, false when both lists are empty (the caller then
-- blocks on BLMOVE pool).
if redis.call('GET', KEYS[4]) == 'drain' then
  return {'drained', ''}
end
local held = redis.call('LINDEX', KEYS[3], 0)
if held then
  return {'held', held}
end
local id = redis.call('LMOVE', KEYS[1], KEYS[3], 'RIGHT', 'LEFT')
if id then
  return {'q', id}
end
id = redis.call('LMOVE', KEYS[2], KEYS[3], 'RIGHT', 'LEFT')
if id then
  return {'pool', id}
end
return false
