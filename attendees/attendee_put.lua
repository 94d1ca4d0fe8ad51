-- attendee_put: add or refresh one attendee of the list (an import row, a walk-in, a sync), never its badge.
-- KEYS att:<code> attendees:terms attendees:counts job:<job_id> attendees:badging attendees:exact attendees:refs events attendees:p:<term>...
-- ARGV <code> <version> <generation> <name> <company> <role> <fields> <order_code> <email> <source> <status> <job_id> <ticket_type> <terms> <attention> <old_terms> <maxlen> [<preprint_run>]
-- <version>: the record's version the caller read ("" for none): anything else answers {"stale"} and changes
-- nothing (the caller reads again). <terms>: the search terms of what is shown (a local edit wins), space-separated
-- (prelude.lua); <old_terms>: those the caller read on the record (its version checked). KEYS from 9 on: the postings
-- key of each word term of <old_terms>, then of <terms> (term_keys). A new attendee gets a short ref (base 36 of a
-- counter) that the index names it by; <refs> maps it to the code followed by the terms it is indexed under
-- (``<code> <term>...``: kept there, not in the attendee's hash, so a long name in a non-Latin script does not push
-- the hash past Redis's listpack size, which costs two to three times the memory).
-- <ticket_type>: "-" for none. <attention>: why the kiosk sends the attendee to the help desk ("" for none).
-- An existing attendee keeps its job id (the badge that may exist).
-- A count, the ref counter or the record's version that is no number (a role's user may HSET any of them) restarts
-- with an event in <events> (bump), so an import, a sync or a desk's walk-in still goes through; a restarted ref
-- counter skips the refs in use, so a new attendee never takes a listed one's place in the index.
-- <preprint_run>: the pre-print run the record names as read (preprint/), when it names one; then the last two KEYS
-- are that run's void list and the completion gate of the attendee's pre-print job, and a change of what the badge
-- prints makes the pre-printed badge void (prelude.lua, preprint_void).
-- Returns {"added"}, {"updated", <edited fields whose source value changed, comma-separated>}, {"unchanged"} or
-- {"stale"}.
local code = ARGV[1]
-- cur: v n c r f o e s st t en ec ef i at
local cur = redis.call('HMGET', KEYS[1], 'v', 'n', 'c', 'r', 'f', 'o', 'e', 's', 'st', 't', 'en', 'ec', 'ef', 'i', 'at')
if (cur[1] or '') ~= ARGV[2] then
  return {'stale'}
end
local had = cur[14] and indexed_terms(redis.call('HGET', KEYS[7], cur[14])) or ''
local function count(status, ticket_type, delta)
  if status == 'valid' then
    bump(KEYS[3], 'expected', delta, KEYS[8], ARGV[17])
    bump(KEYS[3], 'expected:' .. ticket_type, delta, KEYS[8], ARGV[17])
  else
    bump(KEYS[3], 'cancelled', delta, KEYS[8], ARGV[17])
  end
end
if had ~= ARGV[16] then
  return {'stale'}
end
local keys = term_keys(KEYS, {ARGV[16], ARGV[14]}, 9)
if not cur[1] then
  local seq = redis.call('HGET', KEYS[3], 'seq')
  if seq and not int_of(seq) then
    -- Past the refs in use rather than back at 1, where every new attendee would skip the whole list one by one.
    local from = redis.call('HLEN', KEYS[7])
    redis.call('HSET', KEYS[3], 'seq', from)
    event(KEYS[8], ARGV[17], 'event', 'integrity_fault', 'key', KEYS[3], 'field', 'seq',
      'reason', bad_value(KEYS[3], 'seq', seq, 'a whole number') .. '; the counter restarts at ' .. from)
  end
  local ref
  repeat
    local n = bump(KEYS[3], 'seq', 1, KEYS[8], ARGV[17])
    ref = ''
    repeat
      local d = n % 36
      ref = string.sub('0123456789abcdefghijklmnopqrstuvwxyz', d + 1, d + 1) .. ref
      n = math.floor(n / 36)
    until n == 0
  until redis.call('HEXISTS', KEYS[7], ref) == 0
  redis.call('HSET', KEYS[1], 'n', ARGV[4], 'c', ARGV[5], 'r', ARGV[6], 'f', ARGV[7], 'o', ARGV[8], 'e', ARGV[9],
    's', ARGV[10], 'st', ARGV[11], 'j', ARGV[12], 't', ARGV[13], 'g', ARGV[3], 'v', 1, 'i', ref, 'at', ARGV[15])
  redis.call('HSET', KEYS[7], ref, ref_entry(code, ARGV[14]))
  reindex(KEYS[2], KEYS[6], keys, '', ARGV[14], ref, true)
  count(ARGV[11], ARGV[13], 1)
  if redis.call('EXISTS', KEYS[4]) == 1 then
    -- Its badge was enqueued before the list was loaded: counted as checked in once it is printed.
    redis.call('HSET', KEYS[5], ARGV[12], ARGV[13])
  end
  return {'added'}
end
if cur[2] == ARGV[4] and cur[3] == ARGV[5] and cur[4] == ARGV[6] and cur[5] == ARGV[7] and cur[6] == ARGV[8]
    and cur[7] == ARGV[9] and cur[8] == ARGV[10] and cur[9] == ARGV[11] and cur[10] == ARGV[13]
    and had == ARGV[14] and (cur[15] or '') == ARGV[15] then
  redis.call('HSET', KEYS[1], 'g', ARGV[3])
  return {'unchanged'}
end
local before = (ARGV[18] or '') ~= '' and badge_shown(KEYS[1])
local kept = {}
if cur[11] and cur[2] ~= ARGV[4] then table.insert(kept, 'name') end
if cur[12] and cur[3] ~= ARGV[5] then table.insert(kept, 'company') end
if cur[13] and cur[5] ~= ARGV[7] then table.insert(kept, 'fields') end
if cur[9] ~= ARGV[11] or cur[10] ~= ARGV[13] then
  count(cur[9], cur[10], -1)
  count(ARGV[11], ARGV[13], 1)
end
reindex(KEYS[2], KEYS[6], keys, had, ARGV[14], cur[14], false)
redis.call('HSET', KEYS[7], cur[14], ref_entry(code, ARGV[14]))
redis.call('HSET', KEYS[1], 'n', ARGV[4], 'c', ARGV[5], 'r', ARGV[6], 'f', ARGV[7], 'o', ARGV[8], 'e', ARGV[9],
  's', ARGV[10], 'st', ARGV[11], 't', ARGV[13], 'g', ARGV[3], 'at', ARGV[15])
bump(KEYS[1], 'v', 1, KEYS[8], ARGV[17])
if before then
  preprint_void(KEYS[1], KEYS[#KEYS - 1], KEYS[#KEYS], code, ARGV[18], before, badge_shown(KEYS[1]))
end
return {'updated', table.concat(kept, ',')}
