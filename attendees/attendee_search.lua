-- attendee_search: the codes of the attendees that have, for every word, a term starting with it (or, for an order
-- code or an e-mail, that exact term). Reads only.
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
local seen, refs = {}, {}
for _, list in ipairs(lists) do
  if list then
    for ref in string.gmatch(list, '%S+') do
      if not seen[ref] then
        seen[ref] = true
        refs[#refs + 1] = ref
        if #refs >= cap then
          break
        end
      end
    end
  end
  if #refs >= cap then
    break
  end
end
local others = {}
for i = 3, #ARGV do
  others[#others + 1] = ARGV[i]
end
local function matches(entry)
  local padded = entry .. ' '
  for _, word in ipairs(others) do
    -- The code comes first and has no space: ' ' .. word can only meet the start of a term.
    if not string.find(padded, ' ' .. word, 1, true)
        and not string.find(padded, ' #' .. word .. ' ', 1, true)
        and not string.find(padded, ' =' .. word .. ' ', 1, true) then
      return false
    end
  end
  return true
end
local codes = {}
local chunk = max * 2
for i = 1, #refs, chunk do
  local entries = redis.call('HMGET', KEYS[2], unpack(refs, i, math.min(i + chunk - 1, #refs)))
  for _, entry in ipairs(entries) do
    if entry and matches(entry) then
      codes[#codes + 1] = string.match(entry, '^%S+')
      if #codes >= max then
        return codes
      end
    end
  end
end
return codes
