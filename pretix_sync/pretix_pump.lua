-- pretix_pump: pretix's share of the printed record moved into its outbox: the entries after the pretix consumer's
-- cursor, oldest first (at most <count>), each of a job loaded from pretix (in pretix:jobs) added to pretix:outbox
-- (first 1 for the attendee's first badge, or the desk's hand-over of a pre-printed one: check in and log the print;
-- 0 for a reprint: log only; a pre-printed badge is no arrival and is not added); then the cursor
-- moves past every entry read (printed_took), and what every consumer has taken leaves the record.
-- flags: allow-oom
-- KEYS printed:consumers printed pretix:jobs pretix:outbox
-- ARGV <consumer> <count>
-- Returns {entries read, entries added to the outbox}. Not registered as a consumer: {0, 0}, nothing read.
-- What pretix is told of one entry: '1' check in and log the print, '0' log it only, nil nothing.
-- A pre-printed badge coming out is no arrival (nil); the desk handing it over is (as a first badge's print).
local function pretix_first(fields)
  if fields.kind == 'preprint' then
    return nil
  end
  return (fields.kind == 'badge' or fields.kind == 'handed_over') and '1' or '0'
end
local cursor = redis.call('HGET', KEYS[1], ARGV[1])
if not cursor then
  return {0, 0}
end
local ms, seq = stream_id(cursor)
local entries = redis.call('XRANGE', KEYS[2], '(' .. string.format('%d-%d', ms, seq), '+', 'COUNT', tonumber(ARGV[2]))
local added = 0
for _, entry in ipairs(entries) do
  local fields = {}
  for i = 1, #entry[2], 2 do
    fields[entry[2][i]] = entry[2][i + 1]
  end
  local first = pretix_first(fields)
  if first and fields.job_id and redis.call('HEXISTS', KEYS[3], fields.job_id) == 1 then
    redis.call('XADD', KEYS[4], '*', 'job_id', fields.job_id, 'epoch', fields.epoch or '',
      'first', first, 'printer', fields.printer or '', 'location', fields.location or '',
      'printed_ms', fields.printed_ms or '0', 'code', fields.attendee or '')
    added = added + 1
  end
end
if #entries > 0 then
  printed_took(KEYS[1], KEYS[2], ARGV[1], entries[#entries][1])
end
return {#entries, added}
