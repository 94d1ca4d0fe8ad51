-- requeue: an operator sends a dead-lettered job back to the front of the pool (after fixing its cause).
-- KEYS dlq job:<id> pool events done:<id>
-- ARGV <id> <by> <maxlen>
-- Returns {"requeued"}, {"not_in_dlq"}, {"no_record"} (a garbage id, or a record that is not a hash: it stays in
-- the DLQ, nothing to print), or {"printed_already"}: the badge came out after it was dead-lettered (a frozen
-- printer, reclaimed while it printed, confirmed late what a peer's begin had refused): it is taken out of the DLQ
-- and not printed again (requeueing it would clear its completion gate and print an unflagged second copy).
local id = ARGV[1]
if not redis.call('LPOS', KEYS[1], id) then
  return {'not_in_dlq'}
end
-- (A done key of another type is the wrong-type record begin dead-lettered the job for: deleted below, as ever.)
if redis.call('TYPE', KEYS[5]).ok == 'string' then
  redis.call('LREM', KEYS[1], 0, id)
  event(KEYS[4], ARGV[3], 'event', 'requeue_refused', 'job_id', id, 'by', ARGV[2],
    'reason', 'printed already at ' .. redis.call('GET', KEYS[5]) .. ' (confirmed after it was dead-lettered)')
  return {'printed_already'}
end
local payload = redis.pcall('HGET', KEYS[2], 'payload')
if not payload or type(payload) == 'table' then  -- none, or job:<id> is not a hash (begin dead-lettered it so)
  return {'no_record'}
end
redis.call('LREM', KEYS[1], 0, id)
redis.call('DEL', KEYS[5])
local reason = redis.call('HGET', KEYS[2], 'error') or ''
redis.call('HSET', KEYS[2], 'state', 'queued', 'printer', '', 'attempts', 0, 'last_error', reason, 'error', '')
redis.call('RPUSH', KEYS[3], id)
event(KEYS[4], ARGV[3], 'event', 'requeued', 'job_id', id, 'by', ARGV[2],
  'reason', 'was dead: ' .. reason)
return {'requeued'}
