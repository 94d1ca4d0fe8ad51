-- handback: give every job pinned to this printer back to the front of the pool, oldest first.
-- Used when the printer is declared down or drained: its pinned badges must not wait for a dead device.
-- KEYS[1] q:<me>   KEYS[2] pool   KEYS[3] events   KEYS[4] pinned
-- ARGV[1] me   ARGV[2] reason   ARGV[3] events maxlen
-- Returns the number of jobs moved.
local moved = 0
-- The oldest pinned job is at the right of q; popping from the left and pushing right leaves it rightmost in the
-- pool, so it is the very next one taken.
local id = redis.call('LMOVE', KEYS[1], KEYS[2], 'LEFT', 'RIGHT')
while id do
  redis.call('ZREM', KEYS[4], ARGV[1] .. '|' .. id)
  moved = moved + 1
  id = redis.call('LMOVE', KEYS[1], KEYS[2], 'LEFT', 'RIGHT')
end
if moved > 0 then
  redis.call('XADD', KEYS[3], 'MAXLEN', '~', ARGV[3], '*', 'event', 'handed_back', 'printer', ARGV[1],
    'count', moved, 'reason', ARGV[2])
end
return moved
