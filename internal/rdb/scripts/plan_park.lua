-- plan_park.lua: take a plan out of a slot without firing it: a plan that
-- cannot be fired (its JSON is broken, its recurrence cannot be read),
-- recording why in failed, or a leftover entry of a plan that has moved
-- past this slot (an id listed twice). plan:<id> is kept as it is.
--
-- KEYS[1] plan:<id>
-- KEYS[2] plan_schedule
-- KEYS[3] plan_schedule:<ts>
-- KEYS[4] failed
-- KEYS[5] resque-go:plans_paused
-- ARGV[1] id, as the slot list holds it
-- ARGV[2] the plan JSON the caller read
-- ARGV[3] ts
-- ARGV[4] the failed entry ("": a leftover entry, nothing recorded)
-- ARGV[5] "": a plan whose JSON was read (ARGV[2]); else the type plan:<id>
--         was seen holding instead of a string (a key written by hand):
--         the id is parked while the key still holds that type
--
-- Returns "parked" (recorded in failed), "dropped" (a leftover entry), or
-- "changed" / "taken" / "gone" / "paused" as plan_fire.lua does. A failed key of
-- another type (a key written by hand) is an error, with nothing done,
-- when there is an entry to record: the id stays in the slot.
local function cleanup()
  slot_cleanup(KEYS[2], KEYS[3], ARGV[3])
end

-- take_plan takes the id out of the slot before the entry is recorded:
-- a failed list of another type must stop the call before that, or the
-- plan would leave its slot with no record of why
local refused = ARGV[4] ~= '' and not_a_list(KEYS[4], 'the plan is not parked')
if refused then
  return refused
end

if ARGV[5] ~= '' then
  local t = redis.call('TYPE', KEYS[1])['ok']
  if t == 'none' then
    redis.call('LREM', KEYS[3], 1, ARGV[1])
    cleanup()
    return 'gone'
  end
  if t ~= ARGV[5] then
    return 'changed'
  end
  if not redis.call('LPOS', KEYS[3], ARGV[1]) then
    cleanup()
    return 'taken'
  end
  redis.call('LREM', KEYS[3], 1, ARGV[1])
else
  local taken = take_plan(KEYS[1], KEYS[2], KEYS[3], ARGV[1], ARGV[2], ARGV[3], KEYS[5])
  if taken then
    return taken
  end
end
cleanup()
if ARGV[4] == '' then
  return 'dropped'
end
redis.call('RPUSH', KEYS[4], ARGV[4])
return 'parked'
