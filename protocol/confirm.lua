-- confirm: the printer proved this badge came out. Written ONLY after that proof.
-- flags: allow-oom
-- KEYS inflight:<me> job:<id> done:<id> events pool stats printed:consumers printed printers minutes [q:<waits> pinned]
-- ARGV <id> <me> <location> <epoch> <maxlen> [<layout> <layout_version> <waits>] [<confirmed_by>]
-- <epoch>: the epoch the badge was begun (and printed) under.
-- <layout>: the badge layout it was drawn with (none: the built-in design), named in the printed event.
-- While any consumer reads the printed record (printed:consumers), the print gets an entry there in this same step,
-- so no consumer can miss a confirmed print (the events stream is capped; the record keeps an entry until every
-- consumer took it): kind "badge" for the job's first confirmed print, "reprint" for a later round's, "preprint" for a
-- job whose hash says kind "preprint" (a pre-printed badge: no arrival); none for kind "separator".
-- <waits>: the printer whose queue the job waits in, when the caller was told (below); "" for none (as <layout>).
-- <confirmed_by>: whose word the print is on, "device" (the printer's own status) or "spooler" (a print server that
-- cannot read the printer); written into the printed event, the job and the printed record's entry. Absent or "":
-- not said (an older agent), and nothing is written.
-- Returns {"printed", maybe_printed_where} or {"duplicate", first_printer}. Never refuses: paper already came out.
-- A job this printer no longer holds may wait in a printer's queue since (a reclaim handed a zone's badge to another
-- printer of its zone): that copy is void once this one is confirmed, and its queue's key must be among KEYS, so the
-- answer is then {"waits", printer}, nothing changed, and the caller calls again naming it.
local id, me, loc = ARGV[1], ARGV[2], ARGV[3]
local waits = ARGV[8] or ''
local confirmed_by = ARGV[9] or ''
-- <minutes>: the event day's per-minute counts (count_print). An agent from before them does not name the key: its
-- queue keys then start one place earlier, and its prints are not counted.
local minutes = KEYS[10] and string.sub(KEYS[10], -8) == ':minutes' and KEYS[10]
local tail = minutes and 11 or 10
-- A second copy came out: flag the job for staff, count it, and say where the first one is.
local function duplicate(first_printer, reason)
  redis.call('HSET', KEYS[2], 'maybe_duplicate', 1, 'duplicate_print', 1)
  bump(KEYS[6], 'duplicate_print', 1, KEYS[4], ARGV[5])
  event(KEYS[4], ARGV[5], 'event', 'duplicate_print', 'job_id', id, 'printer', me, 'location', loc, 'first_printer', first_printer,
    'reason', reason, 'epoch', ARGV[4])
  return {'duplicate', first_printer}
end
local now = now_ms()
local owned = redis.call('LREM', KEYS[1], 0, id) > 0
if not owned then
  -- Nothing has changed yet (the LREM removed nothing). Only a queued job waits in a queue: a replayed confirm of a
  -- printed one does not ask.
  local record = redis.pcall('HMGET', KEYS[2], 'state', 'pinned')
  if type(record) == 'table' and record[1] == 'queued' and record[2] and record[2] ~= '' and record[2] ~= waits then
    return {'waits', record[2]}
  end
end
-- A print begun before the job's latest reprint round (reprint.lua): confirmed again (a journal replay after a
-- failover) it changes nothing; never confirmed before, it is an extra copy of an earlier round.
-- A round_epoch that is not a whole number (HSET by hand or by a role user) counts as none: the paper came out, so the
-- print is recorded all the same, and the field named in an integrity_fault event.
local round_raw = redis.call('HGET', KEYS[2], 'round_epoch')
local round = int_of(round_raw, 0)
if not round then
  round = 0
  bump(KEYS[6], 'integrity_fault', 1, KEYS[4], ARGV[5])
  event(KEYS[4], ARGV[5], 'event', 'integrity_fault', 'job_id', id, 'printer', me, 'field', 'round_epoch',
    'reason', bad_value(KEYS[2], 'round_epoch', round_raw, 'a whole number') .. '; counted as no reprint round')
end
if tonumber(ARGV[4]) <= round then
  if string.find(',' .. (redis.call('HGET', KEYS[2], 'printed_epochs') or '') .. ',', ',' .. ARGV[4] .. ',', 1, true) then
    return {'printed', ''}
  end
  local last = redis.call('HGET', KEYS[2], 'last_printer') or ''
  return duplicate(last, 'printed a copy begun before a reprint; the earlier copy came out at ' .. last)
end
local first = redis.call('SET', KEYS[3], me, 'NX')
if not first then
  local prior = redis.call('GET', KEYS[3])
  if prior == me and redis.call('HGET', KEYS[2], 'printed_epoch') == ARGV[4] then
    -- The same print confirmed again (a reply lost with the connection, or a restart replaying the journal).
    return {'printed', ''}
  end
  local where = prior
  local prior_loc = redis.call('HGET', KEYS[2], 'printed_at')
  if prior_loc and prior_loc ~= '' then
    where = prior .. ' (' .. prior_loc .. ')'
  end
  return duplicate(prior, 'printed a second time; the first copy came out at ' .. where)
end
if not owned then
  -- A peer reclaimed it while it printed here (we were frozen or cut off): the copy waiting in the pool is void.
  redis.call('LREM', KEYS[5], 0, id)
  if waits ~= '' then
    redis.call('LREM', KEYS[tail], 0, id)
    redis.call('ZREM', KEYS[tail + 1], pinned_member(waits, id))
  end
  -- Another printer has begun it since (after that reclaim; or a failover lost the reclaim and our take, and the
  -- record is the frozen printer's again while we confirm our journal's print): that printer may print it too.
  local other = redis.call('HMGET', KEYS[2], 'state', 'printer')
  if other[1] == 'printing' and other[2] and other[2] ~= '' and other[2] ~= me then
    local place = other[2]
    local other_loc = redis.call('HGET', KEYS[9], other[2]) or ''
    if other_loc ~= '' then place = place .. ' (' .. other_loc .. ')' end
    local where = redis.call('HGET', KEYS[2], 'maybe_printed_where') or ''
    if where == '' then where = place elseif not string.find(where, place, 1, true) then where = where .. '; ' .. place end
    redis.call('HSET', KEYS[2], 'maybe_printed', 1, 'maybe_printed_where', where)
  end
end
local maybe = redis.call('HGET', KEYS[2], 'maybe_printed_where') or ''
redis.call('HSET', KEYS[2], 'state', 'printed', 'printer', me, 'printed_ms', now, 'printed_at', loc,
  'printed_epoch', ARGV[4])
if confirmed_by ~= '' then
  redis.call('HSET', KEYS[2], 'confirmed_by', confirmed_by)
end
-- The printed record's entry next to the job's: what its consumers (a ticketing system's check-in) must never miss comes before
-- the counters.
-- The job's own kind (preprint/): a pre-printed badge is recorded as such (no arrival: its consumers do not check
-- the attendee in); a box's separator label is no badge and gets no entry.
local job = redis.call('HMGET', KEYS[2], 'zone', 'kind', 'printed_epochs')
local job_kind = job[2] or ''
-- A reprint round (reprint.lua) keeps the earlier rounds' confirmed prints in printed_epochs.
local first_round = (job[3] or '') == ''
if job_kind ~= 'separator' and redis.call('HLEN', KEYS[7]) > 0 then
  local kind = first_round and 'badge' or 'reprint'
  if job_kind == 'preprint' then kind = 'preprint' end
  redis.call('XADD', KEYS[8], '*', 'kind', kind, 'job_id', id, 'epoch', ARGV[4],
    'printer', me, 'location', loc, 'printed_ms', now, 'layout', ARGV[6] or '', 'layout_version', ARGV[7] or '',
    'confirmed_by', confirmed_by)
end
bump(KEYS[6], 'printed', 1, KEYS[4], ARGV[5])
if maybe ~= '' then
  redis.call('HSET', KEYS[2], 'maybe_duplicate', 1)
  bump(KEYS[6], 'maybe_duplicate', 1, KEYS[4], ARGV[5])
  event(KEYS[4], ARGV[5], 'event', 'maybe_duplicate', 'job_id', id, 'printer', me, 'location', loc,
    'reason', 'an earlier attempt may also have printed: look at ' .. maybe)
end
local printed = {'event', 'printed', 'job_id', id, 'printer', me, 'location', loc, 'epoch', ARGV[4]}
if ARGV[6] and ARGV[6] ~= '' then
  table.insert(printed, 'layout'); table.insert(printed, ARGV[6])
  table.insert(printed, 'layout_version'); table.insert(printed, ARGV[7])
end
if confirmed_by ~= '' then
  table.insert(printed, 'confirmed_by'); table.insert(printed, confirmed_by)
end
event(KEYS[4], ARGV[5], unpack(printed))
if minutes then
  -- A label came out at this printer either way (its badges an hour, its labels left); an arrival only for a
  -- door badge's first round: a pre-printed badge arrives when it is handed over (count_handover), and a box's
  -- separator label is no badge.
  count_print(minutes, job[1], me, first_round and job_kind ~= 'preprint' and job_kind ~= 'separator', now)
end
return {'printed', maybe}
