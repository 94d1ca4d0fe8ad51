-- drain: an operator takes a printer out of service (or puts it back). Its agent stops taking work at once (take
-- and steal read the order), finishes or releases the badge in hand, and its pinned jobs go to the front of the pool.
-- KEYS ctl:<printer> q:<printer> pool events pinned
-- ARGV <printer> <order> <by> <maxlen>
-- <order>: "drain" or "resume".
-- Returns the number of pinned jobs handed back (0 on resume, and on a second drain).
if ARGV[2] == 'resume' then
  if redis.call('DEL', KEYS[1]) == 1 then
    event(KEYS[4], ARGV[4], 'event', 'resumed', 'printer', ARGV[1], 'by', ARGV[3])
  end
  return 0
end
local first = redis.call('SET', KEYS[1], 'drain', 'NX')
local moved = pinned_to_pool(KEYS[2], KEYS[3], KEYS[5], ARGV[1])
if first or moved > 0 then
  event(KEYS[4], ARGV[4], 'event', 'drained', 'printer', ARGV[1], 'by', ARGV[3], 'handed_back', moved)
end
return moved
