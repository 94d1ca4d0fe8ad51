-- edit: a staff correction of an attendee's name, company or fields, kept beside what the source says.
-- KEYS att:<code> attendees:index
-- ARGV <code> <version> <name> <company> <fields> <terms>
-- <name>, <company>, <fields>: the local edit of each ("" for none: what the source says is shown); <terms>: the
-- search terms of what is shown now. A later import keeps the edit and says so (put.lua).
-- Returns {"edited"}, {"unknown"} or {"stale"}.
local code = ARGV[1]
local cur = redis.call('HMGET', KEYS[1], 'v', 'ix')
if not cur[1] then
  return {'unknown'}
end
if cur[1] ~= ARGV[2] then
  return {'stale'}
end
for i, field in ipairs({'en', 'ec', 'ef'}) do
  local value = ARGV[2 + i]
  if value == '' then
    redis.call('HDEL', KEYS[1], field)
  else
    redis.call('HSET', KEYS[1], field, value)
  end
end
for term in string.gmatch(cur[2] or '', '%S+') do
  redis.call('ZREM', KEYS[2], term .. '\0' .. code)
end
for term in string.gmatch(ARGV[6], '%S+') do
  redis.call('ZADD', KEYS[2], 0, term .. '\0' .. code)
end
redis.call('HSET', KEYS[1], 'ix', ARGV[6])
redis.call('HINCRBY', KEYS[1], 'v', 1)
return {'edited'}
