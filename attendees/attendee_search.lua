-- attendee_search: the codes of the attendees that have, for every word, a term starting with it (or, for an order
-- code or an e-mail, that exact term). Reads only.
-- flags: no-writes
-- KEYS attendees:exact attendees:refs attendees:p:<term>...
-- ARGV <max_codes> <first> <word>...
-- <first>: the search's most selective word; from the third key on, the postings keys of its prefix range (the
-- terms the caller read, at most a few hundred). It gathers at most 20 times <max_codes> candidates (a one-letter
-- word narrows little and must not make Redis read the whole list); each is kept when its <refs> entry
-- (``<code> <term>...``, prelude.lua) has every other <word> as the start of a term, or as its order code or e-mail
-- whole. So the other words cost a look at the candidates' entries, not a read of their own postings.
-- Returns at most <max_codes> codes, in no particular order.
local max = tonumber(ARGV[1])
local cap = max * 20
local first = ARGV[2]
local lists = {}
if #KEYS > 2 then
  lists = redis.call('MGET', unpack(KEYS, 3))
end
local exact = redis.call('HMGET', KEYS[1], '#' .. first, '=' .. first)
table.insert(lists, exact[1])
table.insert(lists, exact[2])
-- Per other word, the three strings its test looks for, made once (not once a candidate).
local others = {}
for i = 3, #ARGV do
  others[#others + 1] = {' ' .. ARGV[i], ' #' .. ARGV[i], ' =' .. ARGV[i]}
end
-- Whether <entry> has <whole> as a whole term (the next character is a space, or there is none).
local function has_whole(entry, whole)
  local _, e = string.find(entry, whole, 1, true)
  return e ~= nil and (e == #entry or string.byte(entry, e + 1) == 32)
end
local function matches(entry)
  for _, word in ipairs(others) do
    -- The code comes first and has no space: ' ' .. word can only meet the start of a term.
    if not string.find(entry, word[1], 1, true) and not has_whole(entry, word[2])
        and not has_whole(entry, word[3]) then
      return false
    end
  end
  return true
end
-- The candidates in the order the postings hold them, a chunk at a time: the search stops as soon as it has
-- <max_codes> (a common first word and a second one most of its attendees have read one chunk, not the cap).
local seen, chunk, codes, gathered = {}, {}, {}, 0
local size = max * 2
local function flush()
  local entries = redis.call('HMGET', KEYS[2], unpack(chunk))
  chunk = {}
  for _, entry in ipairs(entries) do
    if entry and matches(entry) then
      codes[#codes + 1] = string.match(entry, '^%S+')
      if #codes >= max then
        return true
      end
    end
  end
  return false
end
for _, list in ipairs(lists) do
  if list then
    for ref in string.gmatch(list, '%S+') do
      if not seen[ref] then
        seen[ref] = true
        gathered = gathered + 1
        chunk[#chunk + 1] = ref
        if #chunk >= size and flush() then
          return codes
        end
        if gathered >= cap then
          break
        end
      end
    end
  end
  if gathered >= cap then
    break
  end
end
if #chunk > 0 then
  flush()
end
return codes
