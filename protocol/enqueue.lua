-- enqueue: add one badge job, idempotent on job_id.
-- KEYS job:<id> q:<pinned>|pool events stats pinned [owned:<creator>]
-- ARGV <id> <payload> <pinned> <maxlen> <creator> [<zone> <zone_printers>] [<only>]
-- <payload>: the job's JSON; <pinned>: the printer it waits for (KEYS[2] is its queue), or "" (KEYS[2] is the pool).
-- <creator>: the intake token that asks, or "" (the CLI). With one, the job records it (created_by: whom it answers
-- to) and its id joins the token's set of jobs (KEYS[6], where the intake counts the token's outstanding jobs), in
-- the same step as the job itself: no crash between them leaves a job its creator cannot read. <zone>,
-- <zone_printers>: the zone the job belongs to and its printers (names apart by spaces), when it has one (add_job).
-- <only>: "1" for a job that <pinned> alone may print (a test badge: it proves that printer): the hash's "only" names
-- the printer; steal never takes it, and a step that would hand it on cancels it instead (hand_on).
-- Returns {1, "queued"} when added, {0, <state>} when the job_id already exists (nothing changes).
local state = redis.call('HGET', KEYS[1], 'state')
if state then
  return {0, state}
end
-- Whom the job answers to, and its place in the token's set, first: nothing that fails later in this step (Redis
-- keeps what a failed script wrote) may leave a job its creator cannot read, or one the token's cap does not count.
if ARGV[5] ~= '' then
  redis.call('HSET', KEYS[1], 'created_by', ARGV[5])
  redis.call('SADD', KEYS[6], ARGV[1])
end
if ARGV[8] == '1' and ARGV[3] ~= '' then
  redis.call('HSET', KEYS[1], 'only', ARGV[3])
end
add_job(KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], ARGV[1], ARGV[2], ARGV[3], ARGV[4], now_ms(), ARGV[6] or '',
  ARGV[7] or '')
return {1, 'queued'}
