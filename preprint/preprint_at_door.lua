-- preprint_at_door: the desk prints an attendee's badge at the door now, though their pre-printed one is (or will
-- be) in a box: the boxed badge becomes void in this step, so the run never prints a second copy unflagged.
-- KEYS att:<code> preprint:run:<run>:voids done:<pp_job_id> preprint:run:<run> job:<pp_job_id>
-- ARGV <run> <code>
-- Not printed yet and the run only planned (not on the printers, no PDF written): the place is void with nothing to
-- pull, and the run leaves it out (pool.py and printing.py read the attendees after the run says it is printing).
-- Printed, or the run on the printers (its pre-print job exists: it may print yet) or in a PDF: void and on the void
-- list as printed, for staff to pull; the door's badge is then the expected second copy.
-- Returns {"voided", <1 printed | 0>, <box>}, {"void", <box>} (void already: the door prints as for any void badge),
-- {"handed_over", <box>} (the attendee holds it: a new badge is a reprint) or {"none"} (no badge in this run).
local a = redis.call('HMGET', KEYS[1], 'preprint', 'bs', 'en', 'n')
local record = preprint_of(a[1], ARGV[1])
if not record then
  return {'none'}
end
local box = tostring(record['box'] or '')
if a[2] == 'handed_over' or a[2] == 'void' then
  return {a[2], box}
end
local run = redis.call('HMGET', KEYS[4], 'state', 'mode')
local printed = a[2] == 'preprinted' or redis.call('EXISTS', KEYS[3]) == 1 or redis.call('EXISTS', KEYS[5]) == 1
  or run[1] ~= 'planned' or (run[2] or '') ~= ''
redis.call('HSET', KEYS[1], 'bs', 'void')
redis.call('HSET', KEYS[2], ARGV[2], cjson.encode({box = record['box'], name = a[3] or a[4] or '',
  reason = 'printed at the door', ms = now_ms(), printed = printed}))
return {'voided', printed and 1 or 0, box}
