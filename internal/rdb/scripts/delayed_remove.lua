-- delayed_remove.lua: delete items from one delayed bucket by their exact
-- bytes, as resque-scheduler's remove_delayed does (LREM every copy, SREM
-- the reverse index), and take the bucket off the schedule when it is left
-- empty, all in one step: a mover never sees an item without its index
-- entry or a scheduled bucket that no longer exists.
--
-- Few items, or a short bucket: one LREM per item. Many items in a long
-- bucket (one LREM is a scan of the whole list): the bucket is read once
-- and written back without them, order kept.
--
-- KEYS[1]    delayed:<ts>
-- KEYS[2]    delayed_queue_schedule
-- KEYS[3..]  timestamps:<item>, one per item of ARGV[3..], same order
-- ARGV[1]    ts, the bucket's schedule member
-- ARGV[2]    the index member, delayed:<ts> (no namespace)
-- ARGV[3..]  the items, distinct
--
-- Returns {removed, unindexed, unscheduled}: copies deleted from the
-- bucket, index entries deleted (an entry whose item is no longer in the
-- bucket is stale and goes too), and 1 when the bucket was taken off the
-- schedule (it was empty, or is now), else 0.
local bucket, schedule = KEYS[1], KEYS[2]
local n = #ARGV - 2
local len = redis.call('LLEN', bucket)
local removed = 0
if len > 0 and n > 0 then
  if n <= 8 or n * len <= 100000 then
    for i = 1, n do
      removed = removed + redis.call('LREM', bucket, 0, ARGV[i + 2])
    end
  else
    local want = {}
    for i = 1, n do want[ARGV[i + 2]] = true end
    local kept = {}
    for _, v in ipairs(redis.call('LRANGE', bucket, 0, -1)) do
      if want[v] then
        removed = removed + 1
      else
        kept[#kept + 1] = v
      end
    end
    if removed > 0 then
      redis.call('DEL', bucket)
      for j = 1, #kept, 1000 do
        redis.call('RPUSH', bucket, unpack(kept, j, math.min(j + 999, #kept)))
      end
    end
  end
end
local unindexed = 0
for i = 1, n do
  unindexed = unindexed + redis.call('SREM', KEYS[i + 2], ARGV[2])
end
local unscheduled = 0
if redis.call('LLEN', bucket) == 0 then
  unscheduled = redis.call('ZREM', schedule, ARGV[1])
end
return {removed, unindexed, unscheduled}
