-- preprint_box: one box of a run being planned: its attendees, in print order, each told where their badge will be.
-- KEYS preprint:run:<run> preprint:run:<run>:box:<n> preprint:run:<run>:box:<n>:codes att:<code>...
-- ARGV <run> <number> <first> <last> [<code> <version> <record>]...
-- <version>: the attendee's record version the plan was made from; <record>: their `preprint` field (JSON).
-- Nothing is written unless every attendee is as read: still valid, at that version, in no run. Else the answer
-- names each one that is not, and the caller plans that box again from a fresh read.
-- Returns {"written", <count>}, {"stale", <code>...}, or {"gone"} (the run is not being planned).
if redis.call('HGET', KEYS[1], 'state') ~= 'planned' or redis.call('HGET', KEYS[1], 'listed') ~= '0' then
  return {'gone'}
end
local stale = {'stale'}
local n = (#ARGV - 4) / 3
for i = 1, n do
  local a = redis.call('HMGET', KEYS[3 + i], 'v', 'st', 'preprint')
  if a[1] ~= ARGV[4 + 3 * i - 1] or a[2] ~= 'valid' or a[3] then
    table.insert(stale, ARGV[4 + 3 * i - 2])
  end
end
if #stale > 1 then
  return stale
end
redis.call('DEL', KEYS[3])
for i = 1, n do
  redis.call('RPUSH', KEYS[3], ARGV[4 + 3 * i - 2])
  redis.call('HSET', KEYS[3 + i], 'preprint', ARGV[4 + 3 * i])
  -- A new version: a change read before this step answers "stale" and is made again knowing the run (put.lua).
  redis.call('HINCRBY', KEYS[3 + i], 'v', 1)
end
redis.call('HSET', KEYS[2], 'number', ARGV[2], 'first', ARGV[3], 'last', ARGV[4], 'count', n)
redis.call('HINCRBY', KEYS[1], 'total', n)
if tonumber(ARGV[2]) > tonumber(redis.call('HGET', KEYS[1], 'boxes') or '0') then
  redis.call('HSET', KEYS[1], 'boxes', ARGV[2])
end
return {'written', n}
