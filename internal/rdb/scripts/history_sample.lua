-- history_sample.lua: add what stat:processed and stat:failed grew by since
-- the last sample to the current bucket of every history ring, and remember
-- the counters. Any number of processes may call it: each growth is counted
-- once, in the bucket of the call that saw it, because reading the last
-- sample, adding and remembering happen in one step. The counters are those
-- every Resque runtime increments, so Ruby, PHP and Node workers' jobs are
-- counted too.
--
-- KEYS[1] stat:processed
-- KEYS[2] stat:failed
-- KEYS[3] resque-go:history_last (hash: at, processed, failed)
-- KEYS[4..] resque-go:history:<resolution>, one per resolution
-- ARGV[1] now, Unix seconds (the caller's clock)
-- ARGV[2] min gap, seconds: a call within this long after the last sample
--         does nothing (many processes sample no more often than one)
-- ARGV[3..] for each resolution, in the order of its key: step (seconds),
--           slots
--
-- Returns:
--   {"skipped"}                  the last sample is younger than min gap
--   {"first"}                    no sample before: the counters are
--                                remembered, nothing is added
--   {"sampled", processed, failed}  what was added to every ring
local function num(v)
  if type(v) ~= 'string' then return 0 end
  local n = tonumber(v)
  if n == nil or n < 0 then return 0 end
  return math.floor(n)
end

local now = tonumber(ARGV[1])
local gap = tonumber(ARGV[2])
local last = redis.call('HMGET', KEYS[3], 'at', 'processed', 'failed')
local lastAt = tonumber(last[1])
if lastAt and now - lastAt >= 0 and now - lastAt < gap then
  return {'skipped'}
end

local p = num(redis.pcall('GET', KEYS[1]))
local f = num(redis.pcall('GET', KEYS[2]))
redis.call('HSET', KEYS[3], 'at', string.format('%d', now), 'processed', string.format('%d', p), 'failed', string.format('%d', f))
if not lastAt then
  return {'first'}
end

-- a counter below its last sample was reset (Resque::Stat.clear): it
-- counted from 0 since
local function grew(cur, before)
  before = num(before)
  if cur >= before then return cur - before end
  return cur
end
local dp, df = grew(p, last[2]), grew(f, last[3])
if dp == 0 and df == 0 then
  return {'sampled', 0, 0}
end

for i = 4, #KEYS do
  local step = tonumber(ARGV[2 * (i - 4) + 3])
  local slots = tonumber(ARGV[2 * (i - 4) + 4])
  local bucket = math.floor(now / step)
  local slot = string.format('%d', bucket % slots)
  local cur = redis.call('HGET', KEYS[i], slot)
  local cp, cf = 0, 0
  if cur then
    local sb, sp, sf = string.match(cur, '^(%d+):(%d+):(%d+)$')
    if sb and tonumber(sb) == bucket then
      cp, cf = tonumber(sp), tonumber(sf)
    end
  end
  redis.call('HSET', KEYS[i], slot, string.format('%d:%d:%d', bucket, cp + dp, cf + df))
end
return {'sampled', dp, df}
