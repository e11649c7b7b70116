-- failed_remove.lua: remove one entry from a list (failed or retries), only
-- if it is still the one the caller read (Ruby: LSET to a sentinel, LREM 1).
--
-- KEYS[1] the list
-- ARGV[1] the entry's bytes as the caller read them
-- ARGV[2] the index it was read at
-- ARGV[3] a sentinel no entry can equal
--
-- Returns the index removed, or -1 when the entry is no longer in the list.
local idx = tonumber(ARGV[2])
if redis.call('LINDEX', KEYS[1], idx) ~= ARGV[1] then
  idx = redis.call('LPOS', KEYS[1], ARGV[1])
  if not idx then
    return -1
  end
end
redis.call('LSET', KEYS[1], idx, ARGV[3])
-- LREM scans from the end nearer to idx (the sentinel is the only one)
local dir = 1
if idx > redis.call('LLEN', KEYS[1]) / 2 then
  dir = -1
end
redis.call('LREM', KEYS[1], dir, ARGV[3])
return idx
