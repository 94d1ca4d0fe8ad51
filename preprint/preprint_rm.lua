-- preprint_rm: a run never printed is forgotten, once its boxes are dropped (preprint_unbox).
-- KEYS preprint:runs preprint:run:<run> preprint:run:<run>:voids
-- ARGV <run>
-- Returns {"removed"}, {"unknown"} or {"state", <state>}.
local state = redis.call('HGET', KEYS[2], 'state')
if not state and redis.call('SISMEMBER', KEYS[1], ARGV[1]) == 0 then
  return {'unknown'}
end
if state and state ~= 'planned' then
  return {'state', state}
end
redis.call('DEL', KEYS[2], KEYS[3])
redis.call('SREM', KEYS[1], ARGV[1])
return {'removed'}
