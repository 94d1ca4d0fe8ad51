-- attendee_edit: a staff correction of an attendee's name, company or fields, kept beside what the source says.
-- KEYS att:<code> attendees:terms attendees:exact attendees:refs events attendees:p:<term>...
-- ARGV <code> <version> <name> <company> <fields> <terms> <old_terms> <maxlen> [<preprint_run>]
-- <name>, <company>, <fields>: the local edit of each ("" for none: what the source says is shown); <terms>: the
-- search terms of what is shown now; <old_terms>, KEYS from 6 on: as put.lua's. A later import keeps the edit and says so (put.lua).
-- A version that is no number (a role's user may HSET it) restarts with an event in <events> (bump).
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
local before = (ARGV[9] or '') ~= '' and badge_shown(KEYS[1])
for i, field in ipairs({'en', 'ec', 'ef'}) do
  local value = ARGV[2 + i]
  if value == '' then
    redis.call('HDEL', KEYS[1], field)
  else
    redis.call('HSET', KEYS[1], field, value)
  end
end
reindex(KEYS[2], KEYS[3], term_keys(KEYS, {ARGV[7], ARGV[6]}, 6), ARGV[7], ARGV[6], cur[2], false)
redis.call('HSET', KEYS[4], cur[2], ref_entry(ARGV[1], ARGV[6]))
bump(KEYS[1], 'v', 1, KEYS[5], ARGV[8])
if before then
  preprint_void(KEYS[1], KEYS[#KEYS - 1], KEYS[#KEYS], ARGV[1], ARGV[9], before, badge_shown(KEYS[1]))
end
return {'edited'}
