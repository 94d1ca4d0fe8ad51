-- layout rm: remove a badge layout (every variant) and the rules that pick it, and announce it.
-- KEYS layouts layouts:version events layouts:rules layout:<name>:<stock>... (every stock it has)
-- ARGV <name> <by> <maxlen> <channel>
-- Returns {removed (0 or 1), the rules removed with it, as a list of "field=value"}.
local name = ARGV[1]
if redis.call('HDEL', KEYS[1], name) == 0 then
  return {0, {}}
end
for i = 5, #KEYS do
  redis.call('DEL', KEYS[i])
end
local rules = redis.call('HGETALL', KEYS[4])
local dropped = {}
for i = 1, #rules, 2 do
  if rules[i + 1] == name then
    redis.call('HDEL', KEYS[4], rules[i])
    table.insert(dropped, rules[i])
  end
end
local venue_version = redis.call('INCR', KEYS[2])
redis.call('XADD', KEYS[3], 'MAXLEN', '~', ARGV[3], '*', 'event', 'layout_removed', 'layout', name, 'by', ARGV[2])
redis.call('PUBLISH', ARGV[4], venue_version)
return {1, dropped}
