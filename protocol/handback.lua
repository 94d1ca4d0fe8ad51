-- handback: hand every job pinned to this printer on, oldest first: a job of a zone to the zone's printer that can
-- print with the fewest jobs ahead, any other (or when none of its zone can print) to the front of the pool.
-- Used when the printer is declared down or drained: its pinned badges must not wait for a dead device.
-- flags: allow-oom
-- KEYS q:<me> pool events pinned [job:<id>... zone-keys...]
-- ARGV <me> <reason> <maxlen> <dead_after_ms> <count> [<id>... <zone-printer>...]
-- <count> ids: the queue as the caller read it (LRANGE), with their job keys; then the zone printers named, each with
-- four keys at the end of KEYS (zone_peers). Returns {"moved", jobs moved, of them to zone printers}, {"retry"} (the
-- queue changed since the caller read it) or {"zones", printer...} (their keys are needed: nothing moved).
local plan, answer = hand_on_plan(KEYS, ARGV, KEYS[1], 5, 5, ARGV[1], nil)
if not plan then
  return answer
end
local pooled, zoned = queue_hand_on(KEYS[1], plan, KEYS[2], KEYS[4], ARGV[1], now_ms(), ARGV[4])
if pooled + zoned > 0 then
  event(KEYS[3], ARGV[3], 'event', 'handed_back', 'printer', ARGV[1], 'count', pooled + zoned, 'to_zone', zoned,
    'reason', ARGV[2])
end
return {'moved', pooled + zoned, zoned}
