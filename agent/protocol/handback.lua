-- handback: give every job pinned to this printer back to the front of the pool, oldest first.
-- Used when the printer is declared down or drained: its pinned badges must not wait for a dead device.
-- KEYS q:<me> pool events pinned
-- ARGV <me> <reason> <maxlen>
-- Returns the number of jobs moved.
local moved = pinned_to_pool(KEYS[1], KEYS[2], KEYS[4], ARGV[1])
if moved > 0 then
  event(KEYS[3], ARGV[3], 'event', 'handed_back', 'printer', ARGV[1], 'count', moved, 'reason', ARGV[2])
end
return moved
