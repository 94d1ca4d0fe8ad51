-- beat: this agent is alive; publish its health.
-- flags: allow-oom
-- KEYS hb health:<me> q:<me> inflight:<me> printers events ctl:<me>
-- ARGV <me> <health> <ttl_ms> <maxlen> <first> <location>
-- <health>: the agent's health JSON, kept <ttl_ms>; <first>: "1" on the first beat after start; <maxlen>: the
-- events stream's cap. The health stored is the agent's JSON plus what only Redis knows for sure: pinned depth,
-- in-flight job, beat time.
-- Returns {server_ms, was_declared_dead (0/1), depth, inflight id or "", operator order or ""}.
local me = ARGV[1]
local now = now_ms()
local was_dead = 0
local prev = redis.call('GET', KEYS[2])
if prev then
  local ok, old = pcall(cjson.decode, prev)
  if ok and type(old) == 'table' and old['state'] == 'dead' then
    was_dead = 1
  end
end
local health = cjson.decode(ARGV[2])
local depth = redis.call('LLEN', KEYS[3])
local inflight = redis.call('LINDEX', KEYS[4], 0) or ''
health['depth'] = depth
health['inflight'] = inflight
health['beat_ms'] = now
redis.call('ZADD', KEYS[1], now, me)
redis.call('HSET', KEYS[5], me, ARGV[6])
redis.call('SET', KEYS[2], cjson.encode(health), 'PX', ARGV[3])
if was_dead == 1 then
  event(KEYS[6], ARGV[4], 'event', 'rejoined', 'printer', me, 'reason', 'agent was declared dead by its peers and is back')
elseif ARGV[5] == '1' then
  event(KEYS[6], ARGV[4], 'event', 'agent_up', 'printer', me)
end
return {now, was_dead, depth, inflight, redis.call('GET', KEYS[7]) or ''}
