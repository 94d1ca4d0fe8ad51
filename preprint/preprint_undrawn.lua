-- preprint_undrawn: a badge of a run that could not be drawn (its PDF left it out) is void: the door prints it.
-- KEYS att:<code> preprint:run:<run>:voids
-- ARGV <run> <code> <reason>
-- Only while the attendee's `preprint` names this run and their badge has no state yet.
-- Returns 1 when it was made void, else 0.
local a = redis.call('HMGET', KEYS[1], 'preprint', 'bs', 'en', 'n')
local record = preprint_of(a[1], ARGV[1])
if not record or a[2] then
  return 0
end
redis.call('HSET', KEYS[1], 'bs', 'void')
redis.call('HSET', KEYS[2], ARGV[2], cjson.encode({box = record['box'], name = a[3] or a[4] or '',
  reason = 'could not be drawn: ' .. ARGV[3], ms = now_ms(), printed = false}))
return 1
