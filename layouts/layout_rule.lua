-- layout rules: a field value picks a layout ("ticket_type=Speaker" -> "speaker"), or no longer does.
-- KEYS layouts:rules layouts:version events layouts
-- ARGV <field=value> <layout name, or "" to remove the rule> <by> <maxlen> <channel>
-- Returns 1 when the rules changed, 0 when not, -1 when the layout named is not set.
local rule, name = ARGV[1], ARGV[2]
local changed
if name == '' then
  changed = redis.call('HDEL', KEYS[1], rule)
else
  if redis.call('HEXISTS', KEYS[4], name) == 0 then
    return -1
  end
  if redis.call('HGET', KEYS[1], rule) == name then
    changed = 0
  else
    redis.call('HSET', KEYS[1], rule, name)
    changed = 1
  end
end
if changed == 1 then
  local venue_version = redis.call('INCR', KEYS[2])
  redis.call('XADD', KEYS[3], 'MAXLEN', '~', ARGV[4], '*', 'event', 'layout_rule', 'rule', rule, 'layout', name,
    'by', ARGV[3])
  redis.call('PUBLISH', ARGV[5], venue_version)
end
return changed
