-- plan_remove.lua: delete a plan and take its id out of the slots given,
-- in one step.
--
-- KEYS[1] plan:<id>
-- KEYS[2] plan_schedule
-- KEYS[3..n] plan_schedule:<ts> lists that may hold the id
-- ARGV[1] id
-- ARGV[2..] ts of KEYS[3..], in the same order
--
-- Returns {deleted, dropped}: deleted is 1 when plan:<id> existed, dropped
-- the number of list entries removed. A slot left empty leaves the
-- schedule.
local deleted = redis.call('DEL', KEYS[1])
local dropped = 0
for i = 3, #KEYS do
  dropped = dropped + redis.call('LREM', KEYS[i], 0, ARGV[1])
  if redis.call('LLEN', KEYS[i]) == 0 then
    redis.call('ZREM', KEYS[2], ARGV[i - 1])
  end
end
return {deleted, dropped}
