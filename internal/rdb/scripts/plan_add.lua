-- plan_add.lua: create a plan and file it in its first slot, in one step;
-- a plan of a paused group is filed paused instead.
--
-- KEYS[1] plan:<id>
-- KEYS[2] plan_schedule
-- KEYS[3] plan_schedule:<ts>, the first slot
-- KEYS[4] resque-go:plan_groups_paused
-- KEYS[5] resque-go:plans_paused
-- ARGV[1] the plan JSON
-- ARGV[2] ts, the first slot (Unix seconds)
-- ARGV[3] id
-- ARGV[4] the plan's group ("": none)
--
-- Returns 1 (filed in its slot), 2 (its group is paused: the id is in
-- plans_paused with score ts, in no slot), or 0 when a plan with this id
-- exists (nothing written).
if redis.call('SETNX', KEYS[1], ARGV[1]) == 0 then
  return 0
end
if ARGV[4] ~= '' and redis.call('SISMEMBER', KEYS[4], ARGV[4]) == 1 then
  redis.call('ZADD', KEYS[5], ARGV[2], ARGV[3])
  return 2
end
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[2])
redis.call('RPUSH', KEYS[3], ARGV[3])
return 1
