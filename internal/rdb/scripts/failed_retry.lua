-- failed_retry.lua: requeue one failed entry (Ruby's Resque::Failure.requeue):
-- mark it with retried_at and push its payload back to its queue, only if the
-- entry is still the one the caller read.
--
-- KEYS[1] failed
-- KEYS[2] queue:<q> of the entry
-- KEYS[3] queues
-- KEYS[4] resque-go attempts counter of the job
-- KEYS[5] resque-go attempts index
-- ARGV[1] the entry's bytes as the caller read them
-- ARGV[2] the index it was read at
-- ARGV[3] the entry with retried_at set
-- ARGV[4] the payload to push (without failCount: a fresh attempt budget)
-- ARGV[5] queue name ("" for a mass-queue job: KEYS[2] is then unassigned,
--         the payload is LPUSHed there as producers push it, and no queue
--         joins queues)
--
-- Returns the index changed, or -1 when the entry is no longer in the list.
-- When the list moved, the entry is looked up by its bytes (LPOS).
local idx = tonumber(ARGV[2])
if redis.call('LINDEX', KEYS[1], idx) ~= ARGV[1] then
  idx = redis.call('LPOS', KEYS[1], ARGV[1])
  if not idx then
    return -1
  end
end
-- the push first: a queue of another type (a key written by hand) stops
-- the retry before the entry says retried_at
if ARGV[5] ~= '' then
  redis.call('RPUSH', KEYS[2], ARGV[4])
else
  redis.call('LPUSH', KEYS[2], ARGV[4])
end
redis.call('LSET', KEYS[1], idx, ARGV[3])
if ARGV[5] ~= '' then
  redis.call('SADD', KEYS[3], ARGV[5])
end
redis.call('DEL', KEYS[4])
redis.call('ZREM', KEYS[5], KEYS[4])
return idx
