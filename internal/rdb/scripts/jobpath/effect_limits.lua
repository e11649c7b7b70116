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

-- limits_refill drops a cap's expired holds (a holder killed without its
-- finish: its lease ran out) and moves up to most parked jobs back while
-- the cap has room; it returns how many it moved. An entry that is not
-- one goes to the list's tail, so it never stops the others.
local function limits_refill(holders, parked, cap, now, qprefix, most)
  redis.call('ZREMRANGEBYSCORE', holders, '-inf', '(' .. now)
  local room = cap - redis.call('ZCARD', holders)
  if room > most then
    room = most
  end
  local moved = 0
  for _ = 1, room do
    local e = redis.call('LPOP', parked)
    if not e then
      break
    end
    if limits_back(e, qprefix) then
      moved = moved + 1
    else
      redis.call('RPUSH', parked, e)
    end
  end
  return moved
end

-- limits_due moves the waiting jobs of a rate that are due (their entries
-- come in due order) back to their queues, at most most of them.
local function limits_due(waiting, now, qprefix, most)
  local moved = 0
  for _ = 1, most do
    local e = redis.call('LINDEX', waiting, '0')
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
    else
      redis.call('RPUSH', waiting, e)
    end
  end
  return moved
end

-- limits_release frees a finished job's hold on a cap and moves one
-- parked job back when that leaves room.
local function limits_release(holders, parked, member, cap, now, qprefix)
  redis.call('ZREM', holders, member)
  if redis.call('EXISTS', parked) == 1 then
    limits_refill(holders, parked, cap, now, qprefix, 1)
  end
end
