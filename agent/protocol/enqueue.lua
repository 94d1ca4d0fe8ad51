-- enqueue: add one badge job, idempotent on job_id.
-- KEYS job:<id> q:<pinned>|pool events stats pinned
-- ARGV <id> <payload> <pinned> <maxlen>
-- <payload>: the job's JSON; <pinned>: the printer it waits for (KEYS[2] is its queue), or "" (KEYS[2] is the pool).
-- Returns {1, "queued"} when added, {0, <state>} when the job_id already exists (nothing changes).
local state = redis.call('HGET', KEYS[1], 'state')
if state then
  return {0, state}
end
add_job(KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], ARGV[1], ARGV[2], ARGV[3], ARGV[4], now_ms())
return {1, 'queued'}
