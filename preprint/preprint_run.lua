-- preprint_run: a new pre-print run's hash, before its boxes are written (preprint_box), listed once they all are
-- (preprint_listed).
-- KEYS preprint:runs preprint:run:<run>
-- ARGV <run> <sort> <box_size> <ticket_types> <pickup> <layout_versions>
-- Returns {"created", <created_ms>}, or {"exists", <state>} when a run of this name is there (listed or not: a plan
-- cut short is dropped with `preprint rm`, never written over).
local state = redis.call('HGET', KEYS[2], 'state')
if state or redis.call('SISMEMBER', KEYS[1], ARGV[1]) == 1 then
  return {'exists', state or ''}
end
local now = now_ms()
redis.call('HSET', KEYS[2], 'name', ARGV[1], 'created_ms', now, 'sort', ARGV[2], 'box_size', ARGV[3],
  'ticket_types', ARGV[4], 'pickup', ARGV[5], 'layout_versions', ARGV[6], 'state', 'planned', 'total', 0,
  'boxes', 0, 'mode', '', 'listed', 0)
return {'created', tostring(now)}
