-- preprint_void_layout: the admin voids a run's pre-printed badges drawn with an older version of a layout (a new
-- version voids nothing by itself: the badges in the boxes stay good unless someone says otherwise).
-- KEYS preprint:run:<run>:voids att:<code>... done:<pp_job_id>...
-- ARGV <run> <layout> <version> <code>...
-- From the second key on: the attendees of one box (their codes in ARGV from 4 on, in the same order), then (as many) their pre-print jobs' completion gates. An attendee whose
-- `preprint` names this run and <layout> at a version below <version>, and whose badge is not handed over or void
-- already, becomes void and goes on the run's void list.
-- Returns the number voided.
local n = (#KEYS - 1) / 2
local voided = 0
for i = 1, n do
  local att = KEYS[1 + i]
  local a = redis.call('HMGET', att, 'preprint', 'bs', 'en', 'n')
  local record = preprint_of(a[1], ARGV[1])
  if record and a[2] ~= 'handed_over' and a[2] ~= 'void' and record['layout'] == ARGV[2]
      and tonumber(record['layout_version'] or 0) < tonumber(ARGV[3]) then
    local printed = a[2] == 'preprinted' or redis.call('EXISTS', KEYS[1 + n + i]) == 1
    redis.call('HSET', att, 'bs', 'void')
    redis.call('HSET', KEYS[1], ARGV[4 + i], cjson.encode({box = record['box'], name = a[3] or a[4] or '',
      reason = 'layout ' .. ARGV[2] .. ' v' .. tostring(record['layout_version']) .. ' replaced by v' .. ARGV[3],
      ms = now_ms(), printed = printed}))
    voided = voided + 1
  end
end
return voided
