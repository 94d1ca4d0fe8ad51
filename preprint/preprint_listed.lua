-- preprint_listed: a run whose boxes are all written joins the venue's runs.
-- KEYS preprint:runs preprint:run:<run>
-- ARGV <run>
-- Returns 1, or 0 when the run's hash is gone.
if redis.call('HGET', KEYS[2], 'state') ~= 'planned' then
  return 0
end
redis.call('HSET', KEYS[2], 'listed', 1)
redis.call('SADD', KEYS[1], ARGV[1])
return 1
