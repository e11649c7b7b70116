-- jobpath/effect_limits.lua: what a job that held a cap's slot frees
-- (docs/limits.md): its hold, and a parked job of that cap, moved back to
-- the head of its queue while the cap has room. Shared by the finish and
-- the sweep (limits_sweep.lua), with the moves the claim's side
-- (source_limits.lua) and the sweep make: parked and waiting entries back
-- to their queues. Plain redis.call: the sweep runs without
-- hot_globals.lua.
--
-- Layout, a section of the finish's effects (finish.lua), one for each cap
-- whose slot the job holds:
-- KEYS[+0] <ns>:resque-go:limit:<name>:holders
-- KEYS[+1] <ns>:resque-go:limit:<name>:parked
-- ARGV[+0] tag             "m"
-- ARGV[+1] member          <worker id>:<claim sequence>, the hold
-- ARGV[+2] cap             N
-- ARGV[+3] now-ms          Unix milliseconds
-- ARGV[+4] queue-prefix    "<ns>:queue:"
--
-- A parked or waiting entry is {"queue":Q,"payload":P} (a waiting one with
-- "due", Unix milliseconds, first): P is the payload as a JSON string, so
-- its bytes come back as they were popped.

-- limits_entry is a parked (due nil) or waiting job's entry.
-- limits_log names (set_aside_key) a limit's key written by hand (of
-- another type) that a step set aside, with err (redis.call's error: a
-- table with an err field, or a string).
local function limits_log(key, err)
  if type(err) == 'table' then
    err = err.err
  end
  set_aside_key(key, 'limit key set aside: ' .. tostring(err))
end

local function limits_entry(queue, payload, due)
  local e = '{"queue":' .. cjson.encode(queue) .. ',"payload":' .. cjson.encode(payload) .. '}'
  if due then
    e = '{"due":' .. string.format('%.3f', due) .. ',' .. string.sub(e, 2)
  end
  return e
end

-- limits_back pushes an entry's job back to the head of its queue (it was
-- at the head when it was popped) and returns its due time (0 for none);
-- an entry that is not one (written by hand) goes nowhere: nil.
local function limits_back(entry, qprefix)
  local ok, e = pcall(cjson.decode, entry)
  if not ok or type(e) ~= 'table' or type(e['queue']) ~= 'string' or type(e['payload']) ~= 'string' then
    return nil
  end
  redis.call('LPUSH', qprefix .. e['queue'], e['payload'])
  return tonumber(e['due']) or 0
end

-- limits_aside goes through an entry that is not a parked or waiting job
-- (written by hand): it goes to list's tail, so it never stops the
-- others, and when bad is a table (the sweep's) it is noted there, list
-- then entry, for the worker to set aside into failed. It returns false
-- when the entry was noted already: every entry left is one gone through.
local function limits_aside(list, e, bad)
  redis.call('RPUSH', list, e)
  if not bad then
    return true
  end
  if bad.seen[e] then
    return false
  end
  bad.seen[e] = true
  bad[#bad + 1] = list
  bad[#bad + 1] = e
  return true
end

-- limits_tries is how many entries a move of at most most jobs looks at:
-- the sweep's (bad a table) goes past up to 100 entries that are not
-- jobs, to set them aside.
local function limits_tries(most, bad)
  if bad then
    return most + 100
  end
  return most
end

-- limits_refill drops a cap's expired holds (a holder killed without its
-- finish: its lease ran out) and any ending absurdly far ahead, and moves
-- up to most parked jobs back while the cap has room; it returns how many
-- it moved. An entry that is not one goes to the list's tail
-- (limits_aside).
local function limits_refill(holders, parked, cap, now, qprefix, most, bad)
  redis.call('ZREMRANGEBYSCORE', holders, '-inf', '(' .. now)
  -- a hold whose lease ends more than a day ahead was written by hand (a
  -- lease is three heartbeats of at most 60 s): it would keep its slot
  -- for good
  local far = redis.call('ZREMRANGEBYSCORE', holders, '(' .. (now + 86400000), '+inf')
  if far > 0 then
    limits_log(holders, far .. ' holds ending more than a day ahead dropped')
  end
  local room = cap - redis.call('ZCARD', holders)
  if room > most then
    room = most
  end
  local moved = 0
  for _ = 1, limits_tries(room, bad) do
    if moved >= room then
      break
    end
    local e = redis.call('LPOP', parked)
    if not e then
      break
    end
    if limits_back(e, qprefix) then
      moved = moved + 1
    elseif not limits_aside(parked, e, bad) then
      break
    end
  end
  return moved
end

-- limits_due moves the waiting jobs of a rate that are due (their entries
-- come in due order) back to their queues, at most most of them; an entry
-- that is not one goes to the tail (limits_aside).
local function limits_due(waiting, now, qprefix, most, bad)
  local moved = 0
  for _ = 1, limits_tries(most, bad) do
    if moved >= most then
      break
    end
    -- a list of another type (written by hand) moves nothing, named in
    -- set_aside_key: the claims that call this go on
    local e = redis.pcall('LINDEX', waiting, '0')
    if type(e) == 'table' and e.err then
      limits_log(waiting, e)
      break
    end
    if not e then
      break
    end
    local ok, d = pcall(cjson.decode, e)
    local due = ok and type(d) == 'table' and tonumber(d['due'])
    if due and due > now then
      break
    end
    redis.call('LPOP', waiting)
    if limits_back(e, qprefix) then
      moved = moved + 1
    elseif not limits_aside(waiting, e, bad) then
      break
    end
  end
  return moved
end

-- limits_release frees a finished job's hold on a cap and moves one
-- parked job back when that leaves room.
-- A holders or parked key of another type (written by hand) frees
-- nothing more, named by set_aside_key: the finish that calls it has
-- already removed the job's record, and a failure here would lose the
-- finish's other effects and the claim after it (the redis.pcall costs
-- what redis.call does; the Lua pcall only when some job is parked).
local function limits_release(holders, parked, member, cap, now, qprefix)
  local r = redis.pcall('ZREM', holders, member)
  if type(r) == 'table' and r.err then
    limits_log(holders, r)
    return
  end
  if redis.call('EXISTS', parked) == 1 then
    local ok, err = pcall(limits_refill, holders, parked, cap, now, qprefix, 1)
    if not ok then
      limits_log(parked, err)
    end
  end
end
