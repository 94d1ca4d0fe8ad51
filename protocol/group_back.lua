-- group_back: hand the rest of the group a printer claimed back whole, to be claimed next by one printer: its job in
-- hand (when it is of the group) first, flagged maybe printed with the printer's place when it was printing, then
-- the rest in order, opened by a continuation label (the group's <cont> payload) unless what is left still starts
-- with the group's opening label. Run for a dead printer by the peer that reclaims it (before reclaim), and by an
-- agent whose printer has been unable to print past the dead-after bound, or that stops.
-- flags: allow-oom
-- KEYS hb inflight:<p> gq:<p> gclaim:<p> groups group:<gid> group:<gid>:q events stats pinned printers job:<cont> [job:<held>] [job:<held>...]
-- ARGV <p> <dead_after_ms> <gid> <held> <cont> <by> <maxlen> <reason>
-- <dead_after_ms>: "force" to hand back without judging the printer's heartbeat (its own agent asks); <gid>, <held>:
-- the group and the jobs in hand as the caller read them (gclaim:<p>; inflight:<p> as LRANGE gives it, newest
-- first, ids joined by spaces: one, or two where a door badge waits at the printer behind one of the group; "" for
-- none), each held job's key in KEYS from 13 on, in that order; <cont>: the id of the continuation label if one is
-- made. Only the held jobs of the group go back with it: a door badge held beside it is left for reclaim or the
-- agent. Returns {"alive"}, {"none"} (no group claimed, or nothing of it left), {"retry"} (the claim, the jobs in
-- hand or the label's id changed since the caller looked), or {"back", how many jobs in hand went back with it,
-- jobs handed back, the continuation label's id or ""}.
local p, gid, held_arg, cont_id = ARGV[1], ARGV[3], ARGV[4], ARGV[5]
local now = now_ms()
if ARGV[2] ~= 'force' then
  local last = redis.call('ZSCORE', KEYS[1], p)
  if last and now - tonumber(last) < tonumber(ARGV[2]) then
    return {'alive'}
  end
end
local claimed = redis.call('GET', KEYS[4]) or ''
if claimed ~= gid then
  return {'retry'}
end
if gid == '' then
  return {'none'}
end
local held_ids = redis.call('LRANGE', KEYS[2], 0, -1)
if table.concat(held_ids, ' ') ~= held_arg then
  return {'retry'}
end
if redis.call('EXISTS', KEYS[12]) == 1 then
  return {'retry'}
end
local location = redis.call('HGET', KEYS[11], p) or ''
local where = p .. ' (' .. location .. ')'
local moved = {}
-- Newest first, each pushed to the right end (taken next): the oldest, the one the printer started, ends up first.
for i, held in ipairs(held_ids) do
  local job = KEYS[12 + i]
  if job and redis.pcall('HGET', job, 'group') == gid then
    redis.call('LREM', KEYS[2], 0, held)
    if redis.call('HGET', job, 'state') == 'printing' then
      -- It may be on paper at this printer: say where, so its print elsewhere is flagged for staff.
      local prior = redis.call('HGET', job, 'maybe_printed_where') or ''
      if prior == '' then prior = where elseif not string.find(prior, where, 1, true) then prior = prior .. '; ' .. where end
      redis.call('HSET', job, 'maybe_printed', 1, 'maybe_printed_where', prior)
    end
    redis.call('HSET', job, 'state', 'queued', 'printer', '')
    bump(job, 'reclaims', 1, KEYS[8], ARGV[7])
    redis.call('RPUSH', KEYS[3], held)
    moved[#moved + 1] = held
  end
end
local count = redis.call('LLEN', KEYS[3])
if count == 0 then
  redis.call('DEL', KEYS[4])
  return {'none'}
end
local first = redis.call('LINDEX', KEYS[3], -1)
local template = redis.call('HGET', KEYS[6], 'cont') or ''
local made = ''
if first ~= redis.call('HGET', KEYS[6], 'head') and template ~= '' then
  local ok, payload = pcall(cjson.decode, template)
  if ok and type(payload) == 'table' then
    local name = redis.call('HGET', KEYS[6], 'n:' .. first) or ''
    local function fill(value)
      if type(value) == 'string' then
        return (string.gsub(string.gsub(value, '{first}', function() return name end), '{count}', tostring(count)))
      elseif type(value) == 'table' then
        for key, inner in pairs(value) do value[key] = fill(inner) end
      end
      return value
    end
    payload = fill(payload)
    payload['job_id'] = cont_id
    add_job(KEYS[12], KEYS[3], KEYS[8], KEYS[9], KEYS[10], cont_id, cjson.encode(payload), '', ARGV[7], now, nil, nil)
    redis.call('HSET', KEYS[12], 'group', gid, 'kind', 'separator')
    -- add_job put it last; it opens what is left.
    redis.call('LREM', KEYS[3], 1, cont_id)
    redis.call('RPUSH', KEYS[3], cont_id)
    redis.call('HSET', KEYS[6], 'head', cont_id)
    bump(KEYS[6], 'continued', 1, KEYS[8], ARGV[7])
    made = cont_id
  end
end
-- The whole rest at once (O(1)): the group's own queue is empty while it is claimed.
redis.call('RENAME', KEYS[3], KEYS[7])
redis.call('DEL', KEYS[4])
redis.call('HSET', KEYS[6], 'state', 'waiting', 'printer', '', 'back_from', where, 'back_ms', now)
redis.call('RPUSH', KEYS[5], gid)
event(KEYS[8], ARGV[7], 'event', 'group_back', 'group', gid, 'printer', p, 'location', location, 'by', ARGV[6],
  'count', count, 'held', table.concat(moved, ' '), 'continued', made, 'reason', ARGV[8])
return {'back', #moved, count, made}
