-- Steps several scripts share, joined in front of each script that uses them when it is loaded (scripts.py).
-- Plain Lua (no Redis Functions): it must run on Redis 6.2 too, which the demo's embedded server is.

-- Redis server time in ms: every timestamp comes from the server, since venue Pis may have no real-time clock.
local function now_ms()
  local t = redis.call('TIME')
  return t[1] * 1000 + math.floor(t[2] / 1000)
end
