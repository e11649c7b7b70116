-- plan_remove.lua: delete a plan and take its id out of the slots given
-- and out of the paused plans, in one step.
--
-- KEYS[1] plan:<id>
-- KEYS[2] plan_schedule
-- KEYS[3] resque-go:plans_paused
-- KEYS[4..n] plan_schedule:<ts> lists that may hold the id
-- ARGV[1] id
-- ARGV[2..] ts of KEYS[4..], in the same order
--
-- Returns {deleted, dropped}: deleted is 1 when plan:<id> existed, dropped
-- the number of list entries removed (a paused plan's entry counts as
-- one). A slot left empty leaves the schedule.
local deleted = redis.call('DEL', KEYS[1])
local dropped = redis.call('ZREM', KEYS[3], ARGV[1])
for i = 4, #KEYS do
  dropped = dropped + redis.call('LREM', KEYS[i], 0, ARGV[1])
  if redis.call('LLEN', KEYS[i]) == 0 then
    redis.call('ZREM', KEYS[2], ARGV[i - 2])
  end
end
return {deleted, dropped}
