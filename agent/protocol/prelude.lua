-- Steps several scripts share, written once. In the Redis Functions library (library.py) every function here is
-- defined once, ahead of all scripts; for Redis 6.2 (the demo's embedded server, which runs plain EVAL) scripts.py
-- joins each function in front of every script that calls it, and only those: a script carries (and
-- `badge-agent acl` grants) only the commands it runs. Blocks are apart by a blank line; a function calls only
-- functions above it.

-- Redis server time in ms: every timestamp comes from the server, since venue Pis may have no real-time clock.
local function now_ms()
  local t = redis.call('TIME')
  return t[1] * 1000 + math.floor(t[2] / 1000)
end

-- Append one event to the venue's audit stream, capped near <maxlen> entries; the rest are its field/value pairs.
local function event(stream, maxlen, ...)
  redis.call('XADD', stream, 'MAXLEN', '~', maxlen, '*', ...)
end

-- The pinned index's member for a job waiting in a printer's queue.
local function pinned_member(printer, id)
  return printer .. '|' .. id
end

-- Park a job that can never print: listed once in the DLQ, counted, and told in an event with the reason. The job
-- record (<job>) is marked dead with the reason too, unless <job> is false (a record of the wrong type cannot be
-- written; the event and the DLQ carry the reason). The rest are extra fields of the event.
local function to_dlq(job, dlq, stats, events, maxlen, id, me, reason, now, ...)
  redis.call('LREM', dlq, 0, id)
  redis.call('LPUSH', dlq, id)
  if job then
    redis.call('HSET', job, 'state', 'dead', 'error', reason, 'printer', me, 'dead_ms', now)
  end
  redis.call('HINCRBY', stats, 'dead', 1)
  event(events, maxlen, 'event', 'dead', 'job_id', id, 'printer', me, 'reason', reason, ...)
end

-- Move every job of a printer's pinned queue to the front of the pool and out of the pinned index, in one step.
-- The oldest pinned job is at the right of the queue; popping from the left and pushing right leaves it rightmost in
-- the pool, so it is the very next one taken. Returns the number of jobs moved.
local function pinned_to_pool(queue, pool, index, printer)
  local moved = 0
  local id = redis.call('LMOVE', queue, pool, 'LEFT', 'RIGHT')
  while id do
    redis.call('ZREM', index, pinned_member(printer, id))
    moved = moved + 1
    id = redis.call('LMOVE', queue, pool, 'LEFT', 'RIGHT')
  end
  return moved
end

-- Add a new badge job (its id known to be free): the job hash, the pool or the pinned queue (and the pinned index),
-- the counter and the event, at server time <now>. Shared by enqueue and by the attendee list's "badge for
-- attendee" step, so a job made from the list is the same record as any other.
local function add_job(job, queue, events, stats, pinned, id, payload, printer, maxlen, now)
  redis.call('HSET', job, 'payload', payload, 'state', 'queued', 'printer', '', 'pinned', printer,
    'attempts', 0, 'epoch', 0, 'enqueued_ms', now, 'reclaims', 0, 'maybe_printed', 0, 'maybe_duplicate', 0)
  -- New jobs go in on the left; agents take from the right: oldest first.
  redis.call('LPUSH', queue, id)
  if printer ~= '' then
    -- Indexed by when it arrived, so idle peers find the oldest pinned job of the venue without reading every queue.
    redis.call('ZADD', pinned, now, pinned_member(printer, id))
  end
  redis.call('HINCRBY', stats, 'enqueued', 1)
  event(events, maxlen, 'event', 'enqueued', 'job_id', id, 'printer', printer)
end
