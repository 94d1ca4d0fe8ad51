-- cancel: staff withdraw a job that no printer has taken yet. A new final state, "cancelled" (in no list).
-- KEYS job:<id> pool q:<pinned>|pool pinned events stats
-- ARGV <id> <pinned> <by> <maxlen>
-- <pinned>: the job's printer as the caller read it ("" = none, and then KEYS[3] is the pool again).
-- A queued job that is in neither list has just been taken by a printer (its state turns printing at begin): it
-- is refused as "taken", never pulled out of an in-flight list, which only its printer may change.
-- Returns {"cancelled"}, {"no_job"}, {"refused", state}, or {"retry"} (its pin is not what the caller read).
local id, pinned = ARGV[1], ARGV[2]
local job = redis.call('HMGET', KEYS[1], 'state', 'pinned')
local state = job[1]
if not state then
  return {'no_job'}
end
if state ~= 'queued' then
  return {'refused', state}
end
if (job[2] or '') ~= pinned then
  return {'retry'}
end
local removed = redis.call('LREM', KEYS[2], 0, id)
if removed == 0 and pinned ~= '' then
  removed = redis.call('LREM', KEYS[3], 0, id)
  if removed > 0 then
    redis.call('ZREM', KEYS[4], pinned_member(pinned, id))
  end
end
if removed == 0 then
  return {'refused', 'taken'}
end
local now = now_ms()
redis.call('HSET', KEYS[1], 'state', 'cancelled', 'cancelled_by', ARGV[3], 'cancelled_ms', now)
bump(KEYS[6], 'cancelled', 1, KEYS[5], ARGV[4])
event(KEYS[5], ARGV[4], 'event', 'cancelled', 'job_id', id, 'by', ARGV[3], 'printer', pinned)
return {'cancelled'}
