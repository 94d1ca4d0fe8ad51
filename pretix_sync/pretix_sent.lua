-- pretix_sent: an outbox entry pretix answered is removed, by the process that holds the sender's lease.
-- flags: allow-oom
-- KEYS pretix:sender pretix:outbox
-- ARGV <me> <entry_id>
-- A process whose lease ran out (another one may be sending the same entry now) removes nothing: the entry stays
-- for the holder, whose send of it is safe to repeat (pretix_sync/push.py).
-- Returns 1 when removed, 0 when the lease is not <me>'s.
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return 0
end
return redis.call('XDEL', KEYS[2], ARGV[2])
