-- attendee_search: the codes of the attendees that have, for every word, a term starting with it (or, for an order
-- code or an e-mail, that exact term). Reads only.
-- KEYS attendees:exact attendees:refs attendees:p:<term>...
-- ARGV <max_codes> (<word> <terms>)...
-- Per word: <terms> postings keys follow in KEYS (the terms of its prefix range the caller read, at most a few
-- hundred). A word gathers at most 20 times <max_codes> attendees: a one-letter word narrows little and must not
-- make Redis read the whole list.
-- Returns at most <max_codes> codes, in no particular order.
local max = tonumber(ARGV[1])
local cap = max * 20
local result = nil
local k = 3
for i = 2, #ARGV, 2 do
  local word, n = ARGV[i], tonumber(ARGV[i + 1])
  local lists = {}
  if n > 0 then
    local keys = {}
    for j = k, k + n - 1 do
      table.insert(keys, KEYS[j])
    end
    lists = redis.call('MGET', unpack(keys))
  end
  k = k + n
  local exact = redis.call('HMGET', KEYS[1], '#' .. word, '=' .. word)
  table.insert(lists, exact[1])
  table.insert(lists, exact[2])
  local found, count = {}, 0
  for _, list in ipairs(lists) do
    if list then
      for ref in string.gmatch(list, '%S+') do
        if (result == nil or result[ref]) and not found[ref] then
          found[ref] = true
          count = count + 1
        end
      end
    end
    if count >= cap then
      break
    end
  end
  if count == 0 then
    return {}
  end
  result = found
end
local refs = {}
for ref in pairs(result or {}) do
  table.insert(refs, ref)
  if #refs >= max then
    break
  end
end
if #refs == 0 then
  return {}
end
return redis.call('HMGET', KEYS[2], unpack(refs))
