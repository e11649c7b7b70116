-- limits_sweep.lua: a worker's periodic pass over the limits it honours
-- (docs/limits.md), after jobpath/effect_limits.lua: the holds of its
-- running jobs renewed, the expired holds of a cap dropped (a holder
-- killed before its finish) and parked jobs moved back while the cap has
-- room, a rate's due waiting jobs moved back, and a limit with nothing
-- left taken off the index.
--
-- KEYS[1]              <ns>:resque-go:limits, the index
-- KEYS[2..1+h]         the holders zsets of the holds to renew
-- KEYS[2+h..1+h+4n]    each limit's holders, parked, waiting and tat keys
-- ARGV[1]  now-ms      Unix milliseconds
-- ARGV[2]  expiry-ms   a renewed hold's new lease end
-- ARGV[3]  queue-prefix "<ns>:queue:"
-- ARGV[4]  h           holds to renew
-- ARGV[5]  n           limits
-- ARGV[6..5+h]         the holds' members (worker id:claim sequence)
-- ARGV[6+h..5+h+2n]    each limit's cap (0: none, a rate) and name
-- Returns the number of jobs moved back to their queues, then, for each
-- entry of a parked or waiting list that is not a job's (written by hand,
-- left at its list's tail), the list and the entry: the worker sets them
-- aside into failed (limits_set_aside.lua).
--
-- A key written by hand with another type (or a tat that is no number)
-- stops only what needs it: the other holds are renewed and the other
-- limits swept (redis.pcall, and a Lua pcall a limit), and set_aside_key
-- names the key; a sweep would otherwise fail whole at each tick, and no
-- parked job of any limit would move back.
local function sweep_log(key, err)
  if type(err) == 'table' then
    err = err.err
  end
  set_aside_key(key, 'set aside by the limits sweep: ' .. tostring(err))
end
local now, expiry, qprefix = tonumber(ARGV[1]), ARGV[2], ARGV[3]
local h, n = tonumber(ARGV[4]), tonumber(ARGV[5])
for i = 1, h do
  local r = redis.pcall('ZADD', KEYS[1 + i], 'XX', expiry, ARGV[5 + i])
  if type(r) == 'table' and r.err then
    sweep_log(KEYS[1 + i], r)
  end
end
local moved = 0
local bad = {seen = {}}
for i = 1, n do
  local k, a = 1 + h + 4 * (i - 1), 5 + h + 2 * (i - 1)
  local cap = tonumber(ARGV[a + 1])
  local ok, m
  if cap > 0 then
    ok, m = pcall(limits_refill, KEYS[k + 1], KEYS[k + 2], cap, now, qprefix, 1000, bad)
  else
    ok, m = pcall(limits_due, KEYS[k + 3], now, qprefix, 1000, bad)
  end
  if ok then
    moved = moved + m
  else
    sweep_log(ARGV[a + 2], m)
  end
  if redis.call('EXISTS', KEYS[k + 1], KEYS[k + 2], KEYS[k + 3], KEYS[k + 4]) == 0 then
    local r = redis.pcall('SREM', KEYS[1], ARGV[a + 2])
    if type(r) == 'table' and r.err then
      sweep_log(KEYS[1], r)
    end
  end
end
bad.seen = nil
table.insert(bad, 1, moved)
return bad
