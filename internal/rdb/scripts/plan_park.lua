-- plan_park.lua: take a plan out of a slot without firing it: a plan that
-- cannot be fired (its JSON is broken, its recurrence cannot be read),
-- recording why in failed, or a leftover entry of a plan that has moved
-- past this slot (an id listed twice). plan:<id> is kept as it is.
--
-- KEYS[1] plan:<id>
-- KEYS[2] plan_schedule
-- KEYS[3] plan_schedule:<ts>
-- KEYS[4] failed
-- ARGV[1] id, as the slot list holds it
-- ARGV[2] the plan JSON the caller read
-- ARGV[3] ts
-- ARGV[4] the failed entry ("": a leftover entry, nothing recorded)
--
-- Returns "parked" (recorded in failed), "dropped" (a leftover entry), or
-- "changed" / "taken" / "gone" as plan_fire.lua does.
local function cleanup()
  if redis.call('LLEN', KEYS[3]) == 0 then
    redis.call('ZREM', KEYS[2], ARGV[3])
  end
end

local plan = redis.call('GET', KEYS[1])
if not plan then
  redis.call('LREM', KEYS[3], 1, ARGV[1])
  cleanup()
  return 'gone'
end
if not redis.call('LPOS', KEYS[3], ARGV[1]) then
  cleanup()
  return 'taken'
end
if plan ~= ARGV[2] then
  return 'changed'
end
redis.call('LREM', KEYS[3], 1, ARGV[1])
cleanup()
if ARGV[4] == '' then
  return 'dropped'
end
redis.call('RPUSH', KEYS[4], ARGV[4])
return 'parked'
