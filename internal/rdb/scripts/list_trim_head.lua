-- list_trim_head.lua: remove entries judged for trimming near the head (the
-- oldest end) of a list (failed or retries), each only if it is still at the
-- index it was read at with the same bytes. An entry that changed meanwhile
-- (retried: it now says retried_at) or moved (another removal shifted the
-- list) is left where it is: the caller reads again. So a concurrent retry or
-- remove, by index or by content, never makes this remove another entry.
--
-- KEYS[1] the list
-- ARGV[1] a sentinel no entry can equal
-- ARGV[2], ARGV[3], ... pairs: the index an entry was read at, its bytes
--
-- Returns the indices (as read) of the entries removed, in ARGV order.
local removed = {}
for i = 2, #ARGV, 2 do
  local idx = tonumber(ARGV[i])
  if redis.call('LINDEX', KEYS[1], idx) == ARGV[i + 1] then
    redis.call('LSET', KEYS[1], idx, ARGV[1])
    removed[#removed + 1] = idx
  end
end
if #removed > 0 then
  -- from the head: every marked entry lies in the first indices
  redis.call('LREM', KEYS[1], #removed, ARGV[1])
end
return removed
