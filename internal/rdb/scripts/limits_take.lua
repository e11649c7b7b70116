-- limits_take.lua: a block of a rate's starts taken at once for a
-- worker's slots to use within the rate's tolerance (docs/limits.md), so
-- its claims and finishes send nothing of the rate while the block lasts
-- (Go counts the starts, runtime/limitgate.go). The rate is the claims'
-- GCRA (jobpath/source_limits_admit.lua): a start is allowed when the
-- theoretical arrival time (tat) is at most the tolerance ahead of now,
-- and moves it on by the interval; k starts taken together move it on by
-- k intervals, each allowed in turn.
--
-- KEYS[1]  <ns>:resque-go:limit:<name>:tat
-- KEYS[2]  <ns>:resque-go:limit:<name>:waiting
-- ARGV[1]  now-ms      Unix milliseconds (a fraction: microseconds)
-- ARGV[2]  interval    milliseconds a start (a fraction)
-- ARGV[3]  burst       the tolerance, milliseconds (1% of the period)
-- ARGV[4]  want        starts wanted
-- Returns the starts taken: 0 when the rate allows none now, or when jobs
-- wait (they go first: the claims that decide each job move them back).
--
-- A waiting list of another type (written by hand) counts as jobs
-- waiting, and a tat that is not a number, or more than a day ahead, as
-- none, as the claims read them; set_aside_key names the key.
local now, interval, burst, want = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local waiting = redis.pcall('LLEN', KEYS[2])
if type(waiting) == 'table' then
  set_aside_key(KEYS[2], 'rate waiting list unusable, no starts taken ahead: ' .. tostring(waiting.err))
  return 0
end
if waiting > 0 then
  return 0
end
local raw = redis.pcall('GET', KEYS[1])
local tat = type(raw) == 'string' and tonumber(raw) or 0
if tat > now + interval + 86400000 then
  set_aside_key(KEYS[1], 'rate holds ' .. tostring(raw) .. ', read as none')
  tat = 0
end
if tat < now then
  tat = now
end
if tat > now + burst then
  return 0
end
local k = math.floor((now + burst - tat) / interval) + 1
if k > want then
  k = want
end
tat = tat + k * interval
-- the key outlives the last start's moment by a second, as the claims'
local r = redis.pcall('SET', KEYS[1], string.format('%.3f', tat), 'PX', math.floor(tat - now) + 1000)
if type(r) == 'table' and r.err then
  set_aside_key(KEYS[1], 'rate unwritable, no starts taken ahead: ' .. tostring(r.err))
  return 0
end
return k
