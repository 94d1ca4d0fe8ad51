-- reprint: staff print a badge again on purpose (coffee on it, a typo fixed): a new round of the same job.
-- KEYS job:<id> done:<id> q:<pinned>|pool dlq events stats pinned inflight:<printer>...
-- ARGV <id> <reason> <by> <cap> <force> <maxlen> <pinned> [<zone> <zone_printers>]
-- <pinned>: the printer the new round waits for (the desk's own, or its zone's that can print: the caller chose it;
-- KEYS[3] is its queue), or "" (KEYS[3] is the pool). A pinned round is indexed in <pinned> as any pinned job, from
-- now (enqueued_ms: the affinity wait before an idle peer may steal it starts when the round is queued). <zone>,
-- <zone_printers>: the zone the round belongs to (the desk's), recorded on the job as enqueue records it, so the
-- steps that hand a pinned job on keep it there.
-- inflight:<printer>: every printer's in-flight list (every printer that ever beat: one must beat before it takes).
-- A printed job's id may still lie in one: a frozen printer's late confirm voids the copy a reclaim put back in the
-- pool, but a peer may have popped that copy already (confirm cannot name the peer's list), and its begin would drop
-- it as printed. Once this round starts, that begin would print it instead, beside the round's own copy in the pool:
-- so the round removes it first, and the job is in one place, the pool (that peer's begin answers not_owner).
-- <cap>: reprints allowed per job, unless <force> is "1".
-- Only a printed or dead job starts a round. The completion gate belongs to the round: done:<id> is removed (the
-- previous round's printer and time are kept on the job as last_printer / last_printed_ms / last_printed_at), so
-- begin does not skip the reprint as "already printed", and confirm's SET NX is again the proof of THIS round's
-- copy: a crash during the round is flagged maybe_printed / maybe_duplicate like any other; the intended copy is not.
-- round_epoch (the epoch when the round began) tells an agent whose journal says it printed this job that the print
-- was an earlier round's, not a confirm Redis lost.
-- Returns {"reprint", reprints}, {"no_job"}, {"refused", state} or {"cap", reprints}.
local id = ARGV[1]
local job = redis.call('HMGET', KEYS[1], 'state', 'reprints', 'printer', 'printed_ms', 'printed_at', 'payload', 'epoch',
  'printed_epoch', 'printed_epochs')
local state = job[1]
if not state or not job[6] then
  return {'no_job'}
end
if state ~= 'printed' and state ~= 'dead' then
  return {'refused', state}
end
-- A reprints that is not a whole number (HSET by hand or by a role user) counts as none, told in an event; this round
-- writes it again.
local reprints = int_of(job[2], 0)
if not reprints then
  reprints = 0
  event(KEYS[5], ARGV[6], 'event', 'integrity_fault', 'job_id', id, 'field', 'reprints',
    'reason', bad_value(KEYS[1], 'reprints', job[2], 'a whole number') .. '; counted as 0')
end
if reprints >= tonumber(ARGV[4]) and ARGV[5] ~= '1' then
  return {'cap', reprints}
end
local now = now_ms()
reprints = reprints + 1
if state == 'dead' then
  redis.call('LREM', KEYS[4], 0, id)
else
  -- printed_epochs: the epoch of every earlier round's confirmed print, so confirm can tell one confirmed again
  -- (a journal replay) from a copy of an earlier round that was never confirmed (a second copy).
  local epochs = job[9] or ''
  if job[8] then epochs = (epochs == '' and job[8]) or (epochs .. ',' .. job[8]) end
  redis.call('HSET', KEYS[1], 'last_printer', job[3] or '', 'last_printed_ms', job[4] or '',
    'last_printed_at', job[5] or '', 'printed_epochs', epochs)
end
redis.call('DEL', KEYS[2])
for i = 8, #KEYS do
  redis.call('LREM', KEYS[i], 0, id)
end
local pinned = ARGV[7] or ''
-- A new round starts clean: attempts and "may have printed at" are about this round's copy only.
-- maybe_duplicate stays: a second copy of an earlier round may still be lying somewhere.
redis.call('HSET', KEYS[1], 'state', 'queued', 'printer', '', 'attempts', 0, 'maybe_printed', 0,
  'maybe_printed_where', '', 'error', '', 'reprints', reprints, 'reprint_reason', ARGV[2], 'reprint_by', ARGV[3],
  'reprint_ms', now, 'round_epoch', int_of(job[7], 0) or 0, 'pinned', pinned)
if ARGV[9] and ARGV[9] ~= '' then
  redis.call('HSET', KEYS[1], 'zone', ARGV[8], 'zone_printers', ARGV[9])
end
-- Agents take from the right: RPUSH makes it the very next badge its printer, or any printer, takes (someone is
-- waiting at a desk).
redis.call('RPUSH', KEYS[3], id)
if pinned ~= '' then
  redis.call('HSET', KEYS[1], 'enqueued_ms', now)
  redis.call('ZADD', KEYS[7], now, pinned_member(pinned, id))
end
bump(KEYS[6], 'reprint', 1, KEYS[5], ARGV[6])
event(KEYS[5], ARGV[6], 'event', 'reprint', 'job_id', id, 'by', ARGV[3],
  'reason', ARGV[2], 'reprints', reprints, 'last_printer', job[3] or '', 'printer', pinned)
return {'reprint', reprints}
