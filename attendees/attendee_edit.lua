-- attendee_edit: a staff correction of an attendee's name, company or fields, kept beside what the source says.
-- KEYS att:<code> attendees:terms attendees:exact attendees:refs attendees:p:<term>...
-- ARGV <code> <version> <name> <company> <fields> <terms> <old_terms> [<preprint_run>]
-- <name>, <company>, <fields>: the local edit of each ("" for none: what the source says is shown); <terms>: the
-- search terms of what is shown now; <old_terms>, KEYS from 5 on: as put.lua's. A later import keeps the edit and says so (put.lua).
-- <preprint_run>: as put.lua's (a correction of what a pre-printed badge says makes it void).
-- Returns {"edited"}, {"unknown"} or {"stale"}.
local cur = redis.call('HMGET', KEYS[1], 'v', 'i')
if not cur[1] then
  return {'unknown'}
end
local had = indexed_terms(redis.call('HGET', KEYS[4], cur[2]))
if cur[1] ~= ARGV[2] or had ~= ARGV[7] then
  return {'stale'}
end
local before = (ARGV[8] or '') ~= '' and badge_shown(KEYS[1])
for i, field in ipairs({'en', 'ec', 'ef'}) do
  local value = ARGV[2 + i]
  if value == '' then
    redis.call('HDEL', KEYS[1], field)
  else
    redis.call('HSET', KEYS[1], field, value)
  end
end
reindex(KEYS[2], KEYS[3], term_keys(KEYS, {ARGV[7], ARGV[6]}, 5), ARGV[7], ARGV[6], cur[2], false)
redis.call('HSET', KEYS[4], cur[2], ref_entry(ARGV[1], ARGV[6]))
redis.call('HINCRBY', KEYS[1], 'v', 1)
if before then
  preprint_void(KEYS[1], KEYS[#KEYS - 1], KEYS[#KEYS], ARGV[1], ARGV[8], before, badge_shown(KEYS[1]))
end
return {'edited'}
