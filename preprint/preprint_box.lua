-- preprint_box: one box of a run being planned: its attendees, in print order, each told where their badge will be.
-- KEYS preprint:run:<run> preprint:run:<run>:box:<n> preprint:run:<run>:box:<n>:codes events att:<code>...
-- ARGV <run> <number> <first> <last> <maxlen> [<code> <version> <record>]...
-- <version>: the attendee's record version the plan was made from; <record>: their `preprint` field (JSON). A count
-- that is no number (a role's user may HSET it) restarts with an event in <events> (bump).
-- Nothing is written unless every attendee is as read: still valid, at that version, in no run. Else the answer
-- names each one that is not, and the caller plans that box again from a fresh read.
-- Returns {"written", <count>}, {"stale", <code>...}, or {"gone"} (the run is not being planned).
if redis.call('HGET', KEYS[1], 'state') ~= 'planned' or redis.call('HGET', KEYS[1], 'listed') ~= '0' then
  return {'gone'}
end
local stale = {'stale'}
local n = (#ARGV - 5) / 3
for i = 1, n do
  local a = redis.call('HMGET', KEYS[4 + i], 'v', 'st', 'preprint')
  if a[1] ~= ARGV[5 + 3 * i - 1] or a[2] ~= 'valid' or a[3] then
    table.insert(stale, ARGV[5 + 3 * i - 2])
  end
end
if #stale > 1 then
  return stale
end
redis.call('DEL', KEYS[3])
for i = 1, n do
  redis.call('RPUSH', KEYS[3], ARGV[5 + 3 * i - 2])
  redis.call('HSET', KEYS[4 + i], 'preprint', ARGV[5 + 3 * i])
  -- A new version: a change read before this step answers "stale" and is made again knowing the run (put.lua).
  bump(KEYS[4 + i], 'v', 1, KEYS[4], ARGV[5])
end
redis.call('HSET', KEYS[2], 'number', ARGV[2], 'first', ARGV[3], 'last', ARGV[4], 'count', n)
bump(KEYS[1], 'total', n, KEYS[4], ARGV[5])
-- A box count that is no number counts as none: the run's boxes are then this one's number.
if tonumber(ARGV[2]) > (int_of(redis.call('HGET', KEYS[1], 'boxes'), 0) or 0) then
  redis.call('HSET', KEYS[1], 'boxes', ARGV[2])
end
return {'written', n}
