-- delayed_trim.lua: delete the first items of a delayed bucket when they
-- are still the ones the caller read, with their index entries, and take
-- the bucket off the schedule when it is left empty, in one step. For
-- removing every item of a long bucket: each call costs its own items,
-- not the bucket's length (delayed_remove.lua scans the whole bucket).
--
-- The caller read the bucket (a snapshot) and removes it from the head, a
-- chunk per call. Movers pop from the head and producers push at the
-- tail, so while the head is the chunk expected the list is: the chunk,
-- the rest of the snapshot (ARGV[4] items), then items pushed since.
--
-- KEYS[1]    delayed:<ts>
-- KEYS[2]    delayed_queue_schedule
-- KEYS[3..]  timestamps:<item> for each item of the unindex list
-- ARGV[1]    ts, the bucket's schedule member
-- ARGV[2]    the index member, delayed:<ts> (no namespace)
-- ARGV[3]    k, the number of head items expected
-- ARGV[4]    how many snapshot items follow them
-- ARGV[5..4+k]  the head items, in order
-- ARGV[5+k..]   the unindex list: distinct items of the chunk with no
--               copy later in the snapshot, same order as KEYS[3..]; the
--               entry is kept when a copy was pushed since the snapshot
--
-- Returns {removed, unindexed, unscheduled}; removed is -1 (nothing done)
-- when the head is not the chunk expected: a mover took some of it, the
-- caller reads the bucket again.
local bucket, schedule = KEYS[1], KEYS[2]
local k, later = tonumber(ARGV[3]), tonumber(ARGV[4])
if k > 0 then
  local head = redis.call('LRANGE', bucket, 0, k - 1)
  if #head ~= k then return {-1, 0, 0} end
  for i = 1, k do
    if head[i] ~= ARGV[4 + i] then return {-1, 0, 0} end
  end
  redis.call('LTRIM', bucket, k, -1)
end
local len = redis.call('LLEN', bucket)
local fresh = len - later
local unindexed = 0
for j = 1, #KEYS - 2 do
  local item = ARGV[4 + k + j]
  if fresh <= 0 or not redis.call('LPOS', bucket, item, 'RANK', -1, 'MAXLEN', fresh) then
    unindexed = unindexed + redis.call('SREM', KEYS[2 + j], ARGV[2])
  end
end
local unscheduled = 0
if len == 0 then
  unscheduled = redis.call('ZREM', schedule, ARGV[1])
end
return {k, unindexed, unscheduled}
