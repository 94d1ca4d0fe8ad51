-- Steps several scripts share, written once. In the Redis Functions library (library.py) every function here is
-- defined once, ahead of all scripts; for Redis 6.2 (the demo's embedded server, which runs plain EVALSHA)
-- library.py also joins each function in front of every script that calls it, and only those (``Library.sources``,
-- which scripts.py sends): a script carries (and `badge-agent acl` grants) only the commands it runs. Blocks are
-- apart by a blank line; a function calls only functions above it.

-- Redis server time in ms: every timestamp comes from the server, since venue Pis may have no real-time clock.
local function now_ms()
  local t = redis.call('TIME')
  return t[1] * 1000 + math.floor(t[2] / 1000)
end

-- Append one event to the venue's audit stream, capped near <maxlen> entries; the rest are its field/value pairs.
local function event(stream, maxlen, ...)
  redis.call('XADD', stream, 'MAXLEN', '~', maxlen, '*', ...)
end

-- Checked reads. Every role user (the intake, a kiosk, a ticketing sync) may HSET any field of a job or of the stats
-- hash, and Redis does not undo a script's writes when it fails halfway: a value a script relies on is read through
-- these, before the script's first write, so that a wrong one is that job's integrity fault (dead-lettered with the
-- field named) or a counter reset with an event, and never an error that stops the printer calling the script.

-- A value as an event or a reason shows it: quoted, cut short (a hand may have written anything).
local function shown_value(value)
  return string.format('%q', string.sub(tostring(value), 1, 40))
end

-- <value> (a field as HGET or HMGET gave it) as a whole number, the kind HINCRBY keeps; <default> when absent; nil
-- when it is anything else (at most 15 digits: a Lua number holds those exactly).
local function int_of(value, default)
  if not value then
    return default
  end
  if #value <= 16 and string.match(value, '^%-?%d+$') and #string.match(value, '%d+') <= 15 then
    return tonumber(value)
  end
  return nil
end

-- The integrity-fault reason for field <field> of <key> holding <value> where a <kind> belongs.
local function bad_value(key, field, value, kind)
  return 'integrity fault: ' .. key .. ' field ' .. field .. ' is ' .. shown_value(value) .. ', not ' .. kind ..
    ' (written by hand or by a tool; left for staff to look at)'
end

-- HINCRBY of a counter (<field> of hash <hash>: a venue's stats, a job's reclaims). A value that is not a whole
-- number (written by hand) does not fail the step that counts: the counter restarts at <by>, told in an event
-- (<events> and <maxlen>). A key of the wrong type still fails (a venue fault for staff), so a step bumps its
-- counters after what must never be lost. Returns the counter's new value.
local function bump(hash, field, by, events, maxlen)
  local n = redis.pcall('HINCRBY', hash, field, by)
  if type(n) == 'number' then
    return n
  end
  local err = n['err'] or ''
  if not string.find(err, 'not an integer', 1, true) and not string.find(err, 'overflow', 1, true) then
    return redis.call('HINCRBY', hash, field, by)  -- not about the value (WRONGTYPE, NOPERM): fails as it did
  end
  local was = redis.call('HGET', hash, field)
  redis.call('HSET', hash, field, by)
  event(events, maxlen, 'event', 'integrity_fault', 'key', hash, 'field', field,
    'reason', bad_value(hash, field, was, 'a whole number') .. '; the counter restarts at ' .. by)
  return by
end

-- The pinned index's member for a job waiting in a printer's queue.
local function pinned_member(printer, id)
  return printer .. '|' .. id
end

-- Park a job that can never print: listed once in the DLQ, counted, and told in an event with the reason. The job
-- record (<job>) is marked dead with the reason too, unless <job> is false (a record of the wrong type cannot be
-- written; the event and the DLQ carry the reason). The rest are extra fields of the event.
local function to_dlq(job, dlq, stats, events, maxlen, id, me, reason, now, ...)
  redis.call('LREM', dlq, 0, id)
  redis.call('LPUSH', dlq, id)
  if job then
    redis.call('HSET', job, 'state', 'dead', 'error', reason, 'printer', me, 'dead_ms', now)
  end
  bump(stats, 'dead', 1, events, maxlen)
  event(events, maxlen, 'event', 'dead', 'job_id', id, 'printer', me, 'reason', reason, ...)
end

-- Add a new badge job (its id known to be free): the job hash, the pool or the pinned queue (and the pinned index),
-- the counter and the event, at server time <now>. Shared by enqueue and by the attendee list's "badge for
-- attendee" step, so a job made from the list is the same record as any other.
-- <zone>, <zone_printers>: the zone the job belongs to and its printers (names apart by spaces), or "" for none:
-- steal and every step that hands a pinned job on read them (zone_pick).
local function add_job(job, queue, events, stats, pinned, id, payload, printer, maxlen, now, zone, zone_printers)
  redis.call('HSET', job, 'payload', payload, 'state', 'queued', 'printer', '', 'pinned', printer,
    'attempts', 0, 'epoch', 0, 'enqueued_ms', now, 'reclaims', 0, 'maybe_printed', 0, 'maybe_duplicate', 0)
  if zone_printers and zone_printers ~= '' then
    redis.call('HSET', job, 'zone', zone, 'zone_printers', zone_printers)
  end
  -- New jobs go in on the left; agents take from the right: oldest first.
  redis.call('LPUSH', queue, id)
  if printer ~= '' then
    -- Indexed by when it arrived, so idle peers find the oldest pinned job of the venue without reading every queue.
    redis.call('ZADD', pinned, now, pinned_member(printer, id))
  end
  bump(stats, 'enqueued', 1, events, maxlen)
  event(events, maxlen, 'event', 'enqueued', 'job_id', id, 'printer', printer)
end

-- A zone's printers as a job's zone_printers names them (apart by spaces), sorted; nil when that is not a list of
-- printer names (lowercase letters, digits, - and _, at most 63, as agent/config.py checks; at most 64 of them):
-- each name becomes keys a caller must give, so a hand-written value must not ask for thousands, or for a "|".
local function zone_names(names)
  local zone = {}
  for name in string.gmatch(names, '%S+') do
    if #zone == 64 or #name > 63 or not string.match(name, '^[%l%d][%l%d_%-]*$') then
      return nil
    end
    zone[#zone + 1] = name
  end
  table.sort(zone)
  return zone
end

-- The printers of a job's zone (its hash's zone_printers), sorted by name, or nil for a job of no zone. A record that
-- is not a hash, or whose zone_printers is not a list of printer names, has no zone here (begin dead-letters it when
-- a printer takes it).
local function zone_of(job)
  local names = redis.pcall('HGET', job, 'zone_printers')
  if type(names) ~= 'string' or names == '' then
    return nil
  end
  return zone_names(names)
end

-- Whether job hash <job> holds what the steps rely on: its state one of the job states (docs/design.md, "Job
-- states"), its counters and times whole
-- numbers (absent ones count as 0), its zone_printers a list of printer names. Returns nil when it does, else the
-- integrity-fault reason naming the first field that does not. Read before a printer's first write to the job.
local function job_fault(job)
  local fields = {'attempts', 'epoch', 'enqueued_ms', 'reclaims', 'round_epoch', 'reprints', 'state',
    'zone_printers'}
  local states = {queued = true, printing = true, printed = true, dead = true, cancelled = true}
  local values = redis.call('HMGET', job, unpack(fields))
  for i = 1, 6 do
    if not int_of(values[i], 0) then
      return bad_value(job, fields[i], values[i], 'a whole number')
    end
  end
  if values[7] and not states[values[7]] then
    return bad_value(job, 'state', values[7], 'a job state')
  end
  if values[8] and values[8] ~= '' and not zone_names(values[8]) then
    return bad_value(job, 'zone_printers', values[8], 'a list of printer names')
  end
  return nil
end

-- The zone printers a step was given: the ARGV from <first> on name them, and the last four KEYS per name are theirs
-- (health, ctl, q, inflight: specs.py, _zone_tail). Returns name -> those keys.
local function zone_peers(keys, argv, first)
  local peers, count = {}, #argv - first + 1
  local base = #keys - 4 * count
  for i = 0, count - 1 do
    local at = base + 4 * i
    peers[argv[first + i]] = {health = keys[at + 1], ctl = keys[at + 2], q = keys[at + 3], inflight = keys[at + 4]}
  end
  return peers
end

-- The printers of <zone> (but <except>) whose keys are not among <peers>, added to <missing> (a set, and its list
-- in missing.names): a step answers with them before it changes anything, and the caller calls it again with them.
local function zone_missing(zone, peers, except, missing)
  for _, name in ipairs(zone) do
    if name ~= except and not peers[name] and not missing[name] then
      missing[name] = true
      missing.names[#missing.names + 1] = name
    end
  end
end

-- Whether a zone printer can print now: not drained, its last heartbeat within <dead_after_ms> of <now>, and its
-- health ready or printing (protocol/state.py; anything else is paused, down, drained or stopped). The same rule as the
-- intake's choice of printer (intake/attendee_routes.py, zone_printer).
local function can_print(peer, now, dead_after_ms)
  if redis.call('GET', peer.ctl) == 'drain' then
    return false
  end
  local raw = redis.call('GET', peer.health)
  if not raw then
    return false
  end
  local ok, health = pcall(cjson.decode, raw)
  if not ok or type(health) ~= 'table' or (health['state'] ~= 'ready' and health['state'] ~= 'printing') then
    return false
  end
  local beat = tonumber(health['beat_ms'])
  return beat ~= nil and now - beat < tonumber(dead_after_ms)
end

-- The printer of <zone> (but <except>) that can print with the fewest jobs ahead of a new one (its pinned queue plus
-- the one in hand; a tie to the first name), or nil when none can. Every name has its keys in <peers> (zone_missing).
local function zone_pick(zone, peers, except, now, dead_after_ms)
  local best, fewest = nil, nil
  for _, name in ipairs(zone) do
    local peer = peers[name]
    if name ~= except and can_print(peer, now, dead_after_ms) then
      local ahead = redis.call('LLEN', peer.q) + redis.call('LLEN', peer.inflight)
      if fewest == nil or ahead < fewest then
        best, fewest = name, ahead
      end
    end
  end
  return best
end

-- Hand a job on from a printer that stops serving it (<except>: dead, drained, down): a job of a zone (<zone>, nil
-- for none) to the front of the queue of its zone's printer that can print with the fewest jobs ahead, indexed as
-- pinned there (and its hash's pinned names that printer); else, or when none of them can print, to the front of the
-- pool. Returns the printer's name or "". A job with a zone has a hash record (zone_of read it).
-- A job for one printer alone (its hash's "only" names the printer: a test badge, which proves that printer and
-- nothing else) is handed to nobody: it ends here, cancelled with the reason, and false is returned.
local function hand_on(job, id, zone, pool, index, peers, except, now, dead_after_ms)
  local only = redis.pcall('HGET', job, 'only')
  if type(only) == 'string' and only ~= '' then
    redis.call('HSET', job, 'state', 'cancelled', 'printer', '', 'cancelled_by', except, 'cancelled_ms', now_ms(),
      'error', 'a badge for ' .. only .. ' alone, which ' .. except .. ' could not print')
    return false
  end
  local to = zone and zone_pick(zone, peers, except, now, dead_after_ms)
  if to then
    redis.call('RPUSH', peers[to].q, id)
    local since = tonumber(redis.pcall('HGET', job, 'enqueued_ms')) or now
    redis.call('ZADD', index, since, pinned_member(to, id))
    -- The queue it waits in now, where cancel looks for it.
    redis.call('HSET', job, 'pinned', to)
    return to
  end
  redis.call('RPUSH', pool, id)
  return ''
end

-- A printer's pinned queue as the caller read it: <count> (ARGV[<arg>]) ids after it in ARGV, newest first, and
-- their job keys from KEYS[<key>] on. Returns the ids, the job keys and where the ARGV after the ids begin.
local function queue_read(keys, argv, key, arg)
  local ids, jobs = {}, {}
  local count = tonumber(argv[arg])
  for i = 1, count do
    ids[i] = argv[arg + i]
    jobs[i] = keys[key + i - 1]
  end
  return ids, jobs, arg + count + 1
end

-- The zones of a printer's pinned queue, read before anything moves. <ids>, <jobs>: the queue's ids, newest first
-- (LRANGE), and their job keys, as the caller read them. Returns false when the queue is not that any more; else
-- the zone of each id that has one (id -> zone), and adds the zone printers whose keys were not given to <missing>.
local function queue_zones(queue, ids, jobs, peers, except, missing)
  local now_ids = redis.call('LRANGE', queue, 0, -1)
  if #now_ids ~= #ids then
    return false
  end
  local zones = {}
  for i, id in ipairs(now_ids) do
    if id ~= ids[i] then
      return false
    end
    local zone = zone_of(jobs[i])
    if zone then
      zones[id] = zone
      zone_missing(zone, peers, except, missing)
    end
  end
  return zones
end

-- What handing a printer's pinned queue on needs, read before anything moves: the queue as the caller read it
-- (queue_read from KEYS[<key>] and ARGV[<arg>]), the zone printers it gave (zone_peers), the zone of each queued job
-- and of each job key in <held> (nil: none; the held jobs handed on too, each with its zone in held_zones). Returns
-- that plan; or nil and the step's answer when it must not go on: {"retry"} (the queue changed) or {"zones",
-- printer...} (their keys are needed as well).
local function hand_on_plan(keys, argv, queue, key, arg, except, held)
  local ids, jobs, first = queue_read(keys, argv, key, arg)
  local peers = zone_peers(keys, argv, first)
  local missing = {names = {}}
  local zones = queue_zones(queue, ids, jobs, peers, except, missing)
  if not zones then
    return nil, {'retry'}
  end
  local held_zones = {}
  for _, job in ipairs(held or {}) do
    local held_zone = zone_of(job)
    if held_zone then
      held_zones[job] = held_zone
      zone_missing(held_zone, peers, except, missing)
    end
  end
  if #missing.names > 0 then
    return nil, {'zones', unpack(missing.names)}
  end
  return {ids = ids, jobs = jobs, zones = zones, peers = peers, held_zones = held_zones}
end

-- Hand on every job of <printer>'s pinned queue as <plan> read it (hand_on_plan), oldest last so that it ends up
-- the very next one taken wherever it goes, out of the pinned index. Returns how many went to the pool and how many
-- to zone printers (a job for its printer alone goes to neither: hand_on ends it).
local function queue_hand_on(queue, plan, pool, index, printer, now, dead_after_ms)
  local pooled, zoned = 0, 0
  for i, id in ipairs(plan.ids) do
    -- It is the head: the queue is what hand_on_plan read (LREM, a list write every role's ACL already grants).
    redis.call('LREM', queue, 1, id)
    redis.call('ZREM', index, pinned_member(printer, id))
    local to = hand_on(plan.jobs[i], id, plan.zones[id], pool, index, plan.peers, printer, now, dead_after_ms)
    if to == '' then
      pooled = pooled + 1
    elseif to then
      zoned = zoned + 1
    end
  end
  return pooled, zoned
end

-- A stream entry id ("<ms>-<seq>") as two numbers; anything else (a value written by hand) as 0, 0, the start.
local function stream_id(text)
  local ms, seq = string.match(text or '', '^(%d+)-(%d+)$')
  if not ms then return 0, 0 end
  return tonumber(ms), tonumber(seq)
end

-- A consumer of the printed record (protocol/printed.py) has taken every entry up to <id>: its cursor moves there
-- (never back), and the entries every consumer has taken are deleted (XTRIM MINID just past the lowest cursor).
-- A consumer that is not registered changes nothing. Returns 1 when the cursor moved, else 0.
local function printed_took(consumers, stream, consumer, id)
  local cursor = redis.call('HGET', consumers, consumer)
  if not cursor then return 0 end
  local ms, seq = stream_id(id)
  local cms, cseq = stream_id(cursor)
  if ms < cms or (ms == cms and seq <= cseq) then return 0 end
  redis.call('HSET', consumers, consumer, string.format('%d-%d', ms, seq))
  local lms, lseq = ms, seq
  for _, other in ipairs(redis.call('HVALS', consumers)) do
    local oms, oseq = stream_id(other)
    if oms < lms or (oms == lms and oseq < lseq) then lms, lseq = oms, oseq end
  end
  redis.call('XTRIM', stream, 'MINID', string.format('%d-%d', lms, lseq + 1))
  return 1
end

-- The event day's counts (eventday/counts.py reads them), in one hash <minutes>: per minute (server time / 60 s)
-- 'b|<zone>|<m>' a zone's badges printed for the first time (its arrivals at a printer), 'h|<zone>|<m>' its
-- pre-printed badges handed over, 'p|<printer>|<m>' a printer's prints of any kind; 'n|<printer>' its prints ever
-- (the roll estimate's counter), 'f|<zone>' when the zone's current stretch of printing began (its first print after
-- five idle minutes: the rate's start) and 'l|<zone>' its last print. A bucket is new at most once a minute; the
-- buckets 240 to 249 minutes older go then, so the hash holds four hours (readers trim what a long gap left).
local function count_minute(minutes, what, name, now)
  local minute = math.floor(now / 60000)
  if redis.call('HINCRBY', minutes, what .. '|' .. name .. '|' .. minute, 1) == 1 then
    local old = {}
    for back = 240, 249 do old[#old + 1] = what .. '|' .. name .. '|' .. (minute - back) end
    redis.call('HDEL', minutes, unpack(old))
  end
end

-- A pre-printed badge handed over at a desk: an arrival of <zone> ("" for none) at server time <now>. The hand-over
-- step calls it in its own atomic step, so the arrival curve counts it exactly once.
local function count_handover(minutes, zone, now)
  count_minute(minutes, 'h', zone ~= '' and zone or '-', now)
end

-- A confirmed print by <printer> of a job of <zone> ("" or false for none) at <now>: <arrival> when it is the job's
-- first confirmed badge (not a reprint, nor a pre-print made ahead of the day).
local function count_print(minutes, zone, printer, arrival, now)
  count_minute(minutes, 'p', printer, now)
  redis.call('HINCRBY', minutes, 'n|' .. printer, 1)
  if arrival then
    zone = (zone and zone ~= '') and zone or '-'
    count_minute(minutes, 'b', zone, now)
    local last = tonumber(redis.call('HGET', minutes, 'l|' .. zone) or '0')
    if now - last > 300000 then redis.call('HSET', minutes, 'f|' .. zone, now) end
    redis.call('HSET', minutes, 'l|' .. zone, now)
  end
end
