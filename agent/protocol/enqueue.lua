-- enqueue: add one badge job, idempotent on job_id.
-- KEYS job:<id> q:<pinned>|pool events stats pinned
-- ARGV <id> <payload> <pinned> <maxlen>
-- <payload>: the job's JSON; <pinned>: the printer it waits for (KEYS[2] is its queue), or "" (KEYS[2] is the pool).
-- Returns {1, "queued"} when added, {0, <state>} when the job_id already exists (nothing changes).
local state = redis.call('HGET', KEYS[1], 'state')
if state then
  return {0, state}
end
local now = now_ms()
redis.call('HSET', KEYS[1], 'payload', ARGV[2], 'state', 'queued', 'printer', '', 'pinned', ARGV[3],
  'attempts', 0, 'epoch', 0, 'enqueued_ms', now, 'reclaims', 0, 'maybe_printed', 0, 'maybe_duplicate', 0)
-- New jobs go in on the left; agents take from the right: oldest first.
redis.call('LPUSH', KEYS[2], ARGV[1])
if ARGV[3] ~= '' then
  -- Indexed by when it arrived, so idle peers find the oldest pinned job of the venue without reading every queue.
  redis.call('ZADD', KEYS[5], now, pinned_member(ARGV[3], ARGV[1]))
end
redis.call('HINCRBY', KEYS[4], 'enqueued', 1)
event(KEYS[3], ARGV[4], 'event', 'enqueued', 'job_id', ARGV[1], 'printer', ARGV[3])
return {1, 'queued'}
