-- layout set: store variants of one badge layout (one per stock) under the layout's next version, and announce it.
-- KEYS layouts layouts:version events layout:<name>:<stock>... (one per variant, in ARGV's order)
-- ARGV <name> <by> <maxlen> <channel> then, per variant, <stock> <document>
-- <document>: the layout as JSON (our format, its files in base64), as layouts/store.py writes it.
-- Variants of other stocks stay as they were. Returns {version of the layout, version of the venue's layouts}.
local name = ARGV[1]
local old = redis.call('HGET', KEYS[1], name)
local info = old and cjson.decode(old) or {}
local version = (tonumber(info.version) or 0) + 1
local stocks, seen = {}, {}
for _, stock in ipairs(info.stocks or {}) do
  if not seen[stock] then seen[stock] = true; table.insert(stocks, stock) end
end
local set = {}
local key = 4
for i = 5, #ARGV, 2 do
  redis.call('HSET', KEYS[key], 'version', version, 'document', ARGV[i + 1])
  if not seen[ARGV[i]] then seen[ARGV[i]] = true; table.insert(stocks, ARGV[i]) end
  table.insert(set, ARGV[i])
  key = key + 1
end
table.sort(stocks)
local now = redis.call('TIME')
redis.call('HSET', KEYS[1], name, cjson.encode({version = version, stocks = stocks, set_ms = now[1] * 1000 +
  math.floor(now[2] / 1000), by = ARGV[2]}))
local venue_version = redis.call('INCR', KEYS[2])
redis.call('XADD', KEYS[3], 'MAXLEN', '~', ARGV[3], '*', 'event', 'layout_set', 'layout', name, 'layout_version',
  version, 'stocks', table.concat(set, ','), 'by', ARGV[2])
redis.call('PUBLISH', ARGV[4], venue_version)
return {version, venue_version}
