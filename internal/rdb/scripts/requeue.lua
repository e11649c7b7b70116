-- requeue.lua: give a job a slot holds back to the head of its queue
-- (hard stop before the job finished).
--
-- KEYS[1] worker:<id>
-- KEYS[2] queue:<q>
-- ARGV[1] the raw payload
--
-- Returns 1, or 0 when worker:<id> is gone (already finished or recovered).
if redis.call('DEL', KEYS[1]) == 0 then
  return 0
end
redis.call('LPUSH', KEYS[2], ARGV[1])
return 1
