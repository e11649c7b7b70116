-- plan_pause.lua: pause a plan: take its id out of its slot and keep the
-- slot in plans_paused, in one step. A paused plan is in no slot list, so
-- no scheduler fires it (neither resque-go's nor resque-v3's PHP one, which
-- pops ids from plan_schedule:<ts>). Pausing takes the id out the way a
-- fire does (plan_take.lua's compare of the JSON), so a pause and a fire
-- of the same slot never both happen: one of them finds the other done.
--
-- KEYS[1] plan:<id>
-- KEYS[2] plan_schedule
-- KEYS[3] plan_schedule:<ts>, the slot the plan's nextRun names
-- KEYS[4] resque-go:plans_paused
-- ARGV[1] id
-- ARGV[2] the plan JSON the caller read
-- ARGV[3] ts, the plan's nextRun
--
-- Returns "paused", "already" (it was paused: nothing done), "gone" (no
-- plan:<id>) or "changed" (the JSON is not what the caller read: read it
-- again). An id the slot does not hold (a PHP plan whose nextRun is stale)
-- is paused all the same: a scheduler that meets it in another slot takes
-- it out unfired (plan_take.lua).
local plan = redis.call('GET', KEYS[1])
if not plan then
  return 'gone'
end
if redis.call('ZSCORE', KEYS[4], ARGV[1]) then
  return 'already'
end
if plan ~= ARGV[2] then
  return 'changed'
end
redis.call('LREM', KEYS[3], 1, ARGV[1])
if redis.call('LLEN', KEYS[3]) == 0 then
  redis.call('ZREM', KEYS[2], ARGV[3])
end
redis.call('ZADD', KEYS[4], ARGV[3], ARGV[1])
return 'paused'
