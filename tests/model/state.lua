-- Everything the model's invariants look at (tests/model/machine.py, ProtocolModel._read), in one atomic step: one
-- consistent moment of the venue, read with one command rather than a transaction of some thirty.
-- KEYS: the NLISTS lists (pool, dlq, each printer's queue and in-flight list), then each job's hash and its done
-- key, then stats, events, pinned. ARGV[1]: NLISTS; ARGV[2]: the number of jobs.
-- Reply: each list; then each job's HGETALL and its done (nil when unset); stats' HGETALL; the events (XRANGE);
-- pinned as member, score pairs.
local nlists, njobs = tonumber(ARGV[1]), tonumber(ARGV[2])
local out = {}
for i = 1, nlists do
  out[#out + 1] = redis.call('LRANGE', KEYS[i], 0, -1)
end
for j = 0, njobs - 1 do
  local at = nlists + 2 * j
  out[#out + 1] = redis.call('HGETALL', KEYS[at + 1])
  out[#out + 1] = redis.call('GET', KEYS[at + 2])
end
local rest = nlists + 2 * njobs
out[#out + 1] = redis.call('HGETALL', KEYS[rest + 1])
out[#out + 1] = redis.call('XRANGE', KEYS[rest + 2], '-', '+')
out[#out + 1] = redis.call('ZRANGE', KEYS[rest + 3], 0, -1, 'WITHSCORES')
return out
