-- promote.lua: move the first item of a due delayed bucket to its queue
-- (or, when it cannot be promoted, to failed), keeping the reverse index
-- and the schedule consistent.
--
-- KEYS[1] delayed:<ts>
-- KEYS[2] delayed_queue_schedule
-- KEYS[3] queue:<q> the item goes to (any key when failing)
-- KEYS[4] queues
-- KEYS[5] timestamps:<item>
-- KEYS[6] failed
-- ARGV[1] the item the caller read at the head of the bucket
-- ARGV[2] the payload to push ("" records ARGV[4] in failed instead)
-- ARGV[3] queue name
-- ARGV[4] failed entry
-- ARGV[5] ts (the schedule member)
-- ARGV[6] the index member, delayed:<ts> (no namespace)
--
-- Returns "moved", "failed", "changed" (the head is no longer ARGV[1]:
-- another mover took it; nothing done) or "empty" (bucket empty; its
-- schedule entry removed).
local head = redis.call('LINDEX', KEYS[1], 0)
if not head then
  redis.call('ZREM', KEYS[2], ARGV[5])
  return 'empty'
end
if head ~= ARGV[1] then
  return 'changed'
end
redis.call('LPOP', KEYS[1])
local result = 'moved'
if ARGV[2] ~= '' then
  redis.call('RPUSH', KEYS[3], ARGV[2])
  redis.call('SADD', KEYS[4], ARGV[3])
else
  redis.call('RPUSH', KEYS[6], ARGV[4])
  result = 'failed'
end
redis.call('SREM', KEYS[5], ARGV[6])
if redis.call('LLEN', KEYS[1]) == 0 then
  redis.call('ZREM', KEYS[2], ARGV[5])
end
return result
