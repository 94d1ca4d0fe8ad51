-- drain: an operator takes a printer out of service (or puts it back). Its agent stops taking work at once (take
-- and steal read the order), finishes or releases the badge in hand, and its pinned jobs are handed on as handback
-- does (a zone's to another of its printers that can print, the rest to the front of the pool).
-- KEYS ctl:<printer> q:<printer> pool events pinned [job:<id>... zone-keys...]
-- ARGV <printer> <order> <by> <maxlen> <dead_after_ms> <count> [<id>... <zone-printer>...]
-- <order>: "drain" or "resume". <count> ids and the zone printers: as handback's.
-- Returns {"moved", pinned jobs handed on, of them to zone printers} (0 on resume, and on a second drain of an
-- empty queue), {"retry"} or {"zones", printer...} (nothing changed: as handback's).
if ARGV[2] == 'resume' then
  if redis.call('DEL', KEYS[1]) == 1 then
    event(KEYS[4], ARGV[4], 'event', 'resumed', 'printer', ARGV[1], 'by', ARGV[3])
  end
  return {'moved', 0, 0}
end
local plan, answer = hand_on_plan(KEYS, ARGV, KEYS[2], 6, 6, ARGV[1], nil)
if not plan then
  return answer
end
local first = redis.call('SET', KEYS[1], 'drain', 'NX')
local pooled, zoned = queue_hand_on(KEYS[2], plan, KEYS[3], KEYS[5], ARGV[1], now_ms(), ARGV[5])
if first or pooled + zoned > 0 then
  event(KEYS[4], ARGV[4], 'event', 'drained', 'printer', ARGV[1], 'by', ARGV[3], 'handed_back', pooled + zoned,
    'to_zone', zoned)
end
return {'moved', pooled + zoned, zoned}
