-- preprint_state: a run moves from one state (and mode) to the next: `done` after every box is marked, mode `pdf`
-- once its PDF is written, `printing` and `printed` for a run on the venue's printers.
-- KEYS preprint:run:<run>
-- ARGV <from_states> <to_state> <mode>
-- <from_states>: the states it may move from, comma-separated; <mode>: "" keeps the run's mode, else the mode it
-- must have or take ("pdf", "pool"): a run printed one way is never printed the other way too.
-- Returns {"moved"}, or {"state", <state>, <mode>} when it is in another state or mode (changing nothing).
local run = redis.call('HMGET', KEYS[1], 'state', 'mode')
if not run[1] then
  return {'state', '', ''}
end
local mode = run[2] or ''
if not string.find(',' .. ARGV[1] .. ',', ',' .. run[1] .. ',', 1, true)
    or (ARGV[3] ~= '' and mode ~= '' and mode ~= ARGV[3]) then
  return {'state', run[1], mode}
end
redis.call('HSET', KEYS[1], 'state', ARGV[2])
if ARGV[3] ~= '' then
  redis.call('HSET', KEYS[1], 'mode', ARGV[3])
end
return {'moved'}
