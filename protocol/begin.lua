-- begin: the last check before a badge is sent to the printer.
-- flags: allow-oom
-- KEYS inflight:<me> job:<id> done:<id> events dlq stats
-- ARGV <id> <me> <location> <maxlen>
-- Returns {"not_owner"} (a peer reclaimed it: do NOT print), {"done", by} (already printed: dropped),
-- {"dead", reason} (no job record, or one that contradicts the protocol: dead-lettered, never printed or skipped
-- silently), {"dropped", reason} (another printer is printing it: this copy of the id is removed, with an event),
-- or {"print", payload, attempts, epoch, maybe_printed_where}.
-- A record contradicts the protocol when its state is printed but done:<id> is absent (done exists exactly when
-- printed), when it is dead yet in a list (a dead job is in none), or when its payload names another job_id: none
-- of these is reachable through the scripts, so a hand or a tool wrote it, and staff must look before it prints. So
-- does a field the steps read as a number, a state or a list of printers that holds something else (job_fault).
-- So does a job key of the wrong type (job:<id> not a hash, done:<id> not a string): that job is dead-lettered and
-- its key left for staff to look at, where the failed read would stop this printer until someone deleted the key.
local id, me = ARGV[1], ARGV[2]
if not redis.call('LPOS', KEYS[1], id) then
  return {'not_owner'}
end
local now = now_ms()
local function dead(reason, integrity, record)
  redis.call('LREM', KEYS[1], 0, id)
  -- a record already marked dead may be in the DLQ too: to_dlq lists it once
  to_dlq(record and KEYS[2], KEYS[5], KEYS[6], KEYS[4], ARGV[4], id, me, reason, now)
  if integrity then
    bump(KEYS[6], 'integrity_fault', 1, KEYS[4], ARGV[4])
  end
  return {'dead', reason}
end
-- Read with pcall: a key of the wrong type answers an error table instead of failing the script.
local done_by = redis.pcall('GET', KEYS[3])
local job = redis.pcall('HMGET', KEYS[2], 'payload', 'state', 'maybe_printed_where', 'printer')
for _, read in ipairs({{job, KEYS[2], 'hash'}, {done_by, KEYS[3], 'string'}}) do
  local err = type(read[1]) == 'table' and read[1]['err']
  if err then
    if not string.find(err, 'WRONGTYPE', 1, true) then
      return redis.error_reply(err)  -- not about this job's data (NOPERM, OOM): the caller's fault handling
    end
    local kind = redis.call('TYPE', read[2])['ok']
    return dead('integrity fault: ' .. read[2] .. ' is a ' .. kind .. ', not a ' .. read[3] ..
      ' (written by hand or by a tool; left for staff to look at)', true, job['err'] == nil)
  end
end
if done_by then
  redis.call('LREM', KEYS[1], 0, id)
  event(KEYS[4], ARGV[4], 'event', 'skipped', 'job_id', id, 'printer', me, 'reason', 'already printed by ' .. done_by)
  return {'done', done_by}
end
if not job[1] then
  return dead('no job record for this id (pushed by hand, or its record was deleted)', false, true)
end
if job[2] == 'printed' then
  return dead('integrity fault: state is printed but no printer confirmed it (done is missing)', true, true)
end
if job[2] == 'dead' then
  return dead('integrity fault: state is dead but the job was still in a list', true, true)
end
-- A field the steps read as a number, a state or a list of printers, with a value they cannot use (HSET by hand or by
-- a role user): this job is dead-lettered with the field named, where the failed step would stop this printer.
local fault = job_fault(KEYS[2])
if fault then
  return dead(fault, true, true)
end
if job[2] == 'printing' and job[4] and job[4] ~= '' and job[4] ~= me then
  -- Every step that moves a job out of a printer's in-flight list sets state queued and printer '', so this id
  -- was pushed into a list by hand while another printer holds it. Printing it would make a second badge: drop
  -- this copy of the id and leave the record to the printer that holds it.
  local reason = 'integrity fault: ' .. job[4] .. ' is printing this job; a second copy of its id was dropped'
  redis.call('LREM', KEYS[1], 0, id)
  bump(KEYS[6], 'integrity_fault', 1, KEYS[4], ARGV[4])
  event(KEYS[4], ARGV[4], 'event', 'integrity_fault', 'job_id', id, 'printer', me, 'reason', reason)
  return {'dropped', reason}
end
local ok, decoded = pcall(cjson.decode, job[1])
if ok and type(decoded) == 'table' and decoded['job_id'] ~= nil and tostring(decoded['job_id']) ~= id then
  -- Unreadable payloads are left to the agent, which dead-letters them with the parse error.
  return dead('integrity fault: the payload is for job_id ' .. string.sub(tostring(decoded['job_id']), 1, 200), true,
    true)
end
local attempts = redis.call('HINCRBY', KEYS[2], 'attempts', 1)
local epoch = redis.call('HINCRBY', KEYS[2], 'epoch', 1)
redis.call('HSET', KEYS[2], 'state', 'printing', 'printer', me, 'claimed_ms', now)
event(KEYS[4], ARGV[4], 'event', 'printing', 'job_id', id, 'printer', me, 'location', ARGV[3], 'attempt', attempts)
return {'print', job[1], attempts, epoch, job[3] or ''}
