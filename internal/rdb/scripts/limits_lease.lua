-- limits_lease.lua: a worker's lease on caps (docs/limits.md), one step a
-- second: for each cap, a lease of one slot for each of the process's
-- slots (its members), taken when the cap has room for all of them and no
-- job is parked, renewed while held, and given back slot by slot once
-- the process is told to shrink it. A job claimed under a held lease
-- takes no hold of its own and its claim and finish send nothing of the
-- cap (Go decides, runtime/limitgate.go).
--
-- KEYS[1]              <ns>:resque-go:limits, the index
-- KEYS[2+2(i-1)]       cap i's holders (zset)
-- KEYS[3+2(i-1)]       cap i's parked jobs (list)
-- ARGV[1]  now-ms      Unix milliseconds
-- ARGV[2]  expiry-ms   the lease's end, now-ms plus three heartbeats
-- ARGV[3]  n           caps
-- then, a cap: N, name, mode, s (members), b (busy members), and the s
-- members (<worker id>:lease, one a slot), the b busy ones first. mode:
--   "a" take the lease if the cap has room for every member and no
--       parked job (else as "s")
--   "r" renew a held lease: the members' ends moved on (ZADD XX); it is
--       kept if every member was still there and no job is parked
--   "s" shrink: renew the busy members (their slots run jobs claimed
--       under the lease; one gone is added again), give back the others
-- Returns a list, one integer a cap: 1 the lease is held, 0 it is not
-- (after "r": give it back at the next step).
--
-- A key of another type (written by hand) leaves that cap without a
-- lease, named by set_aside_key; the others go on.
local function lease_log(key, err)
  if type(err) == 'table' then
    err = err.err
  end
  set_aside_key(key, 'no lease taken: ' .. tostring(err))
end

-- lease_own is how many of members holders has.
local function lease_own(holders, members)
  local own = 0
  for i = 1, #members do
    if redis.call('ZSCORE', holders, members[i]) then
      own = own + 1
    end
  end
  return own
end

-- lease_cap is one cap's step; it returns 1 when the lease is held.
local function lease_cap(holders, parked, now, expiry, cap, name, mode, members, busy)
  local r = redis.pcall('ZREMRANGEBYSCORE', holders, '-inf', '(' .. now)
  if type(r) == 'table' and r.err then
    lease_log(holders, r)
    return 0
  end
  local waiting = redis.pcall('LLEN', parked)
  if type(waiting) == 'table' then
    lease_log(parked, waiting)
    waiting = 1
  end
  if mode == 'a' then
    local own = lease_own(holders, members)
    if waiting == 0 and redis.call('ZCARD', holders) - own + #members <= cap then
      local add = {}
      for i = 1, #members do
        add[#add + 1], add[#add + 2] = expiry, members[i]
      end
      redis.call('ZADD', holders, unpack(add))
      redis.pcall('SADD', KEYS[1], name) -- an index of another type (written by hand) stops nothing
      return 1
    end
  elseif mode == 'r' then
    local add = {'XX'}
    for i = 1, #members do
      add[#add + 1], add[#add + 2] = expiry, members[i]
    end
    -- every member must still be there: some run out when the process
    -- stalled past its lease, and another's claim may have taken the room
    local own = lease_own(holders, members)
    redis.call('ZADD', holders, unpack(add))
    if own == #members and waiting == 0 then
      return 1
    end
    return 0
  end
  for i = 1, #members do
    if i <= busy then
      -- added again when gone (a Redis restarted empty): its slot runs a job
      redis.call('ZADD', holders, expiry, members[i])
    else
      redis.call('ZREM', holders, members[i])
    end
  end
  return 0
end

local now, expiry, n = tonumber(ARGV[1]), ARGV[2], tonumber(ARGV[3])
local out, a = {}, 4
for i = 1, n do
  local cap, name, mode, s, b = tonumber(ARGV[a]), ARGV[a + 1], ARGV[a + 2], tonumber(ARGV[a + 3]), tonumber(ARGV[a + 4])
  local members = {}
  for j = 1, s do
    members[j] = ARGV[a + 4 + j]
  end
  a = a + 5 + s
  out[i] = lease_cap(KEYS[2 + 2 * (i - 1)], KEYS[3 + 2 * (i - 1)], now, expiry, cap, name, mode, members, b)
end
return out
