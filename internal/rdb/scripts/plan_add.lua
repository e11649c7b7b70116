-- plan_add.lua: create a plan and file it in its first slot, in one step.
--
-- KEYS[1] plan:<id>
-- KEYS[2] plan_schedule
-- KEYS[3] plan_schedule:<ts>, the first slot
-- ARGV[1] the plan JSON
-- ARGV[2] ts, the first slot (Unix seconds)
-- ARGV[3] id
--
-- Returns 1, or 0 when a plan with this id exists (nothing written).
if redis.call('SETNX', KEYS[1], ARGV[1]) == 0 then
  return 0
end
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[2])
redis.call('RPUSH', KEYS[3], ARGV[3])
return 1
