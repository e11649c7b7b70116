-- plan_clean.lua: drop a slot from the schedule when its list is empty.
--
-- KEYS[1] plan_schedule
-- KEYS[2] plan_schedule:<ts>
-- ARGV[1] ts
--
-- Returns 1 when the slot was dropped, 0 when its list holds ids.
if redis.call('LLEN', KEYS[2]) == 0 then
  redis.call('ZREM', KEYS[1], ARGV[1])
  return 1
end
return 0
