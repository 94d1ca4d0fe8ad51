-- preprint_done: the sheets of one box of a PDF run are printed (an admin says so): its attendees' badges are
-- pre-printed.
-- KEYS preprint:run:<run> preprint:run:<run>:box:<n>:codes events att:<code>...
-- ARGV <run> <maxlen>
-- Only an attendee whose `preprint` names this run and whose badge has no state yet is marked; one whose printed
-- fields changed since the plan (void) stays void. Counted on the run (`preprinted`; a count that is no number
-- restarts with an event in <events>, bump).
-- Returns {"done", <count>} or {"state", <state>} (not a PDF run waiting to be printed).
local run = redis.call('HMGET', KEYS[1], 'state', 'mode')
if run[1] ~= 'planned' or run[2] ~= 'pdf' then
  return {'state', (run[1] or '') .. ((run[2] and run[2] ~= '') and (' ' .. run[2]) or '')}
end
local n = 0
for i = 4, #KEYS do
  local a = redis.call('HMGET', KEYS[i], 'preprint', 'bs')
  if not a[2] and preprint_of(a[1], ARGV[1]) then
    redis.call('HSET', KEYS[i], 'bs', 'preprinted')
    n = n + 1
  end
end
bump(KEYS[1], 'preprinted', n, KEYS[3], ARGV[2])
return {'done', n}
