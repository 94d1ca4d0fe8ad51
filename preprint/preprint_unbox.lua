-- preprint_unbox: drop one box of a run never printed: its attendees are in no run again.
-- KEYS preprint:run:<run> preprint:run:<run>:box:<n> preprint:run:<run>:box:<n>:codes att:<code>...
-- ARGV <run>
-- Only an attendee whose `preprint` names this run and whose pre-printed badge has no state is changed.
-- Returns {"dropped", <count>} or {"state", <state>} (the run is printing, printed or done: its badges exist).
local state = redis.call('HGET', KEYS[1], 'state')
if state and state ~= 'planned' then
  return {'state', state}
end
local n = 0
for i = 4, #KEYS do
  local a = redis.call('HMGET', KEYS[i], 'preprint', 'bs')
  if not a[2] and preprint_of(a[1], ARGV[1]) then
    redis.call('HDEL', KEYS[i], 'preprint')
    n = n + 1
  end
end
redis.call('DEL', KEYS[2], KEYS[3])
return {'dropped', n}
