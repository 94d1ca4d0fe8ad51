-- Steps the attendee list's scripts share: helpers of the venue's function library, beside the protocol's
-- (protocol/library.py). A function calls only functions above it.
--
-- The search index. A word term (a word of a name or company) is kept once in <terms> (sorted set, score 0) for
-- prefix ranges, and its postings, the short refs of the attendees that have it (" r1 r2 "), in a string key of its
-- own that grows by APPEND: a word thousands share (a company everyone works for) costs no more to add to than a
-- rare one. An order code ("#abc12") or an e-mail ("=ada@example.org") is found whole: its postings are a field of
-- the <exact> hash, and it is not in <terms>. <refs> maps a ref to ``<code> <term>...``: the attendee's code, then
-- the terms it is indexed under (what a search filters its candidates by, and what the next change unindexes).

-- A <refs> entry: the code, then the terms.
local function ref_entry(code, terms)
  if terms == '' then
    return code
  end
  return code .. ' ' .. terms
end

-- The terms of a <refs> entry ('' for none or no entry).
local function indexed_terms(entry)
  if not entry then
    return ''
  end
  local s = string.find(entry, ' ', 1, true)
  return s and string.sub(entry, s + 1) or ''
end

-- The key of each word term of the space-separated lists, in the order the caller passed them in <given> (the
-- script's KEYS) from <first> on.
local function term_keys(given, lists, first)
  local keys, n = {}, first
  for _, list in ipairs(lists) do
    for term in string.gmatch(list, '%S+') do
      local mark = string.sub(term, 1, 1)
      if mark ~= '#' and mark ~= '=' then
        keys[term] = given[n]
        n = n + 1
      end
    end
  end
  return keys
end

-- Add attendee <ref> to each term of <add> that <had> lacks; remove it from each term of <had> that <add> lacks.
-- <keys>: term_keys of both lists. <fresh>: the ref is new, so no postings hold it yet (no look before appending).
local function reindex(terms, exact, keys, had, add, ref, fresh)
  local before, after = {}, {}
  for term in string.gmatch(had, '%S+') do before[term] = true end
  for term in string.gmatch(add, '%S+') do after[term] = true end
  for term in pairs(before) do
    if not after[term] then
      local key = keys[term]
      local list = key and redis.call('GET', key) or redis.call('HGET', exact, term)
      local s, e = string.find(list or '', ' ' .. ref .. ' ', 1, true)
      if s then
        list = string.sub(list, 1, s) .. string.sub(list, e + 1)
        if list == ' ' and key then
          redis.call('DEL', key)
          redis.call('ZREM', terms, term)
        elseif list == ' ' then
          redis.call('HDEL', exact, term)
        elseif key then
          redis.call('SET', key, list)
        else
          redis.call('HSET', exact, term, list)
        end
      end
    end
  end
  for term in pairs(after) do
    if not before[term] then
      local key = keys[term]
      if key then
        if redis.call('EXISTS', key) == 0 then
          redis.call('SET', key, ' ' .. ref .. ' ')
          redis.call('ZADD', terms, 0, term)
        elseif fresh or not string.find(redis.call('GET', key), ' ' .. ref .. ' ', 1, true) then
          redis.call('APPEND', key, ref .. ' ')
        end
      else
        local list = redis.call('HGET', exact, term) or ' '
        if not string.find(list, ' ' .. ref .. ' ', 1, true) then
          redis.call('HSET', exact, term, list .. ref .. ' ')
        end
      end
    end
  end
end

-- What an attendee's badge prints, as shown (a staff correction over the source's value): name, company, role,
-- fields, ticket type; and the ticket's status. Compared before and after a change, it tells whether a pre-printed
-- badge still says it (and is still anyone's).
local function badge_shown(att)
  local a = redis.call('HMGET', att, 'en', 'n', 'ec', 'c', 'r', 'ef', 'f', 't', 'st')
  return {a[1] or a[2] or '', a[3] or a[4] or '', a[5] or '', a[6] or a[7] or '', a[8] or '', a[9] or ''}
end

-- An attendee's pre-print record (their `preprint` field, JSON {run, box, layout, layout_version, fields_hash}) when
-- it names <run>; nil when there is none, it is not JSON, or it is another run's.
local function preprint_of(raw, run)
  if not raw then
    return nil
  end
  local ok, record = pcall(cjson.decode, raw)
  if not ok or type(record) ~= 'table' or record['run'] ~= run then
    return nil
  end
  return record
end

-- A pre-printed badge (preprint/) that no longer says what the record shows is void: the attendee's badge state
-- `bs` becomes "void" (the door prints a new one, once) and the badge goes on its run's void list <voids> (code ->
-- JSON box, name, reason, ms, printed), for staff to pull from its box. <done>: the completion gate of the
-- attendee's pre-print job (a run on the venue's printers is printed when it exists). <run>: the run the caller
-- read on the record. Nothing for a badge already handed over (the attendee holds it), or one void already.
local function preprint_void(att, voids, done, code, run, before, after)
  local a = redis.call('HMGET', att, 'preprint', 'bs')
  local record = preprint_of(a[1], run)
  if not record or a[2] == 'handed_over' or a[2] == 'void' then
    return
  end
  local what = {'name', 'company', 'role', 'fields', 'ticket type'}
  local changed = {}
  for i = 1, 5 do
    if before[i] ~= after[i] then table.insert(changed, what[i]) end
  end
  local reason = table.concat(changed, ', ') .. ' changed'
  if before[6] ~= after[6] and after[6] ~= 'valid' then
    reason = 'ticket ' .. after[6]
  elseif #changed == 0 then
    return
  end
  local printed = a[2] == 'preprinted' or redis.call('EXISTS', done) == 1
  redis.call('HSET', att, 'bs', 'void')
  redis.call('HSET', voids, code, cjson.encode({box = record['box'], name = before[1],
    reason = reason, ms = now_ms(), printed = printed}))
end

-- A cancel undone (attendee_status.lua): the pre-printed badge the cancel made void is the attendee's again, off the
-- void list <voids>, only while there is nothing in a box to pull: the cancel voided it (its reason), it never
-- printed (<done>, the pre-print job's completion gate, absent), and the run (<run_key>) is still only planned, not
-- handed to the printers nor written as a PDF (each reads the attendees after it says so, and leaves a void badge
-- out). Else the badge stays void and the door prints the attendee's badge, once.
local function preprint_unvoid(att, voids, done, run_key, code, run)
  local a = redis.call('HMGET', att, 'preprint', 'bs')
  if a[2] ~= 'void' or not preprint_of(a[1], run) then
    return
  end
  local found, entry = pcall(cjson.decode, redis.call('HGET', voids, code) or '')
  if not found or type(entry) ~= 'table' or entry['reason'] ~= 'ticket cancelled' or entry['printed'] ~= false then
    return
  end
  local r = redis.call('HMGET', run_key, 'state', 'mode')
  if redis.call('EXISTS', done) == 1 or r[1] ~= 'planned' or (r[2] or '') ~= '' then
    return
  end
  redis.call('HDEL', att, 'bs')
  redis.call('HDEL', voids, code)
end
