-- preprint_handover: the desk hands an attendee their pre-printed badge: that is their arrival. In one step the
-- badge state becomes `handed_over`, the attendee is counted checked in, and the printed record gets an entry of
-- kind `handed_over` for its consumers (pretix checks the attendee in; webhooks hear it), as confirm.lua writes one
-- for a badge printed at the door.
-- It counts as an arrival of <zone> on the event day's counts (prelude's count_handover), never as a print.
-- KEYS att:<code> preprint:run:<run> attendees:counts printed:consumers printed events done:<pp_job_id> minutes
-- ARGV <run> <job_id> <by> <maxlen> <code> [<zone>]
-- <job_id>: the attendee's badge job id (what the printed record's consumers know the attendee by); <code>: their
-- ticket code, named in the entry (no badge job of theirs may exist to read it from); <zone>: the desk's zone ("" for
-- none). A caller from before the event day's counts names no minutes key: the hand-over is then not counted there.
-- A counter that is no number restarts with an integrity_fault event (bump): the hand-over still goes through.
-- Returns {"handed_over", <box>}, {"already", <box>} (handed over before: nothing changes), {"void", <box>} (it no
-- longer says what the record does: print the attendee's badge instead), {"not_printed", <box>} (the run has not
-- printed it yet), or {"none"} (the attendee has no badge in this run).
local a = redis.call('HMGET', KEYS[1], 'preprint', 'bs', 't', 'st')
local record = preprint_of(a[1], ARGV[1])
if not record then
  return {'none'}
end
local box = tostring(record['box'] or '')
if a[2] == 'handed_over' then
  return {'already', box}
end
if a[2] == 'void' or a[4] ~= 'valid' then
  return {'void', box}
end
if a[2] ~= 'preprinted' and redis.call('EXISTS', KEYS[7]) == 0 then
  return {'not_printed', box}
end
local now = now_ms()
redis.call('HSET', KEYS[1], 'bs', 'handed_over', 'ho_ms', now)
-- The printed record's entry next to the attendee's state, before the counters (as confirm.lua): what its consumers
-- (pretix's check-in) must never miss.
if redis.call('HLEN', KEYS[4]) > 0 then
  redis.call('XADD', KEYS[5], '*', 'kind', 'handed_over', 'job_id', ARGV[2], 'epoch', '', 'printer', '',
    'location', ARGV[3], 'printed_ms', now, 'layout', record['layout'] or '',
    'layout_version', tostring(record['layout_version'] or ''), 'confirmed_by', 'desk', 'attendee', ARGV[5])
end
bump(KEYS[2], 'handed_over', 1, KEYS[6], ARGV[4])
bump(KEYS[3], 'checked_in', 1, KEYS[6], ARGV[4])
bump(KEYS[3], 'checked_in:' .. (a[3] or '-'), 1, KEYS[6], ARGV[4])
if KEYS[8] then
  count_handover(KEYS[8], ARGV[6] or '', now)
end
event(KEYS[6], ARGV[4], 'event', 'handed_over', 'job_id', ARGV[2], 'run', ARGV[1], 'box', box, 'by', ARGV[3])
return {'handed_over', box}
