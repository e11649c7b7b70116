-- mass_batch_open_push.lua: a push to a batch known only by its id (`mass
-- batch push ID`): to its list while it exists, or as the first push of a
-- batch `mass batch create` reserved (its mark then goes: the list now
-- carries the batch). A list that is gone while the mark is too (expired,
-- committed, or never created) is not started again: the jobs pushed to
-- it before would be missing from the batch without a word.
--
-- KEYS[1] uncommitted:<batch_id>
-- KEYS[2] resque-go:batch_created:<batch_id>
-- ARGV[1] time to live, seconds
-- ARGV[2..] payloads, in push order
--
-- Returns the list's length, or false when the batch is missing.
if redis.call('EXISTS', KEYS[1]) == 0 then
  if redis.call('DEL', KEYS[2]) == 0 then
    return false
  end
end
local n = 0
for i = 2, #ARGV do
  n = redis.call('LPUSH', KEYS[1], ARGV[i])
end
redis.call('EXPIRE', KEYS[1], ARGV[1])
return n
