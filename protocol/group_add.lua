-- group_add: add a group of jobs that one printer prints whole and in order (a box of pre-printed badges): each
-- job's hash as enqueue writes it (add_job), but waiting in the group's own queue, not the pool; the group waits in
-- the venue's groups list until a ready printer claims it whole (group_claim).
-- KEYS groups group:<gid> group:<gid>:q events stats pinned [job:<id>...]
-- ARGV <gid> <printers> <cont> <maxlen> <count> [<id> <payload> <fields> <label>]...
-- <printers>: who may claim it (names apart by spaces), "" for any printer; <cont>: the payload of the label that
-- opens what is left of it when it is handed on mid-way (group_back), "" for none; <count> jobs follow, in print
-- order, each with its job key in KEYS from 7 on; <fields>: a JSON object of more fields for the job's hash (its
-- "kind", say), <label>: what the continuation label names it by.
-- Returns {"added", count}, {"exists"} (a group of this id was added before: nothing changed) or {"job_exists", id}
-- (a job of that id exists: nothing changed).
local gid, count = ARGV[1], tonumber(ARGV[5])
if redis.call('EXISTS', KEYS[2]) == 1 or redis.call('EXISTS', KEYS[3]) == 1 then
  return {'exists'}
end
for i = 1, count do
  if redis.call('EXISTS', KEYS[6 + i]) == 1 then
    return {'job_exists', ARGV[2 + 4 * i]}
  end
end
local now = now_ms()
local labels = {}
for i = 1, count do
  local at = 2 + 4 * i
  local id = ARGV[at]
  -- printer "": not pinned; the "queue" is the group's own, so no printer takes it before the group is claimed.
  add_job(KEYS[6 + i], KEYS[3], KEYS[4], KEYS[5], KEYS[6], id, ARGV[at + 1], '', ARGV[4], now, nil, nil)
  redis.call('HSET', KEYS[6 + i], 'group', gid)
  local ok, extra = pcall(cjson.decode, ARGV[at + 2])
  if ok and type(extra) == 'table' then
    for name, value in pairs(extra) do
      -- Never the protocol's own fields: only what the caller adds beside them.
      if type(name) == 'string' and type(value) == 'string' and redis.call('HEXISTS', KEYS[6 + i], name) == 0 then
        redis.call('HSET', KEYS[6 + i], name, value)
      end
    end
  end
  labels[#labels + 1] = 'n:' .. id
  labels[#labels + 1] = ARGV[at + 3]
end
redis.call('HSET', KEYS[2], 'printers', ARGV[2], 'cont', ARGV[3], 'state', 'waiting', 'printer', '',
  'total', count, 'head', count > 0 and ARGV[6] or '', 'created_ms', now, 'continued', 0, unpack(labels))
redis.call('LPUSH', KEYS[1], gid)
event(KEYS[4], ARGV[4], 'event', 'group_added', 'group', gid, 'count', count, 'printers', ARGV[2])
return {'added', count}
