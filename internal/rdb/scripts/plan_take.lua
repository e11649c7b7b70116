-- plan_take.lua: a fragment (local functions) for plan_fire.lua and
-- plan_park.lua: take a plan id out of its slot list when the plan is still
-- what the caller read.
--
-- slot_cleanup(schedule, slot, ts): drops ts from plan_schedule once the
--   slot list plan_schedule:<ts> is empty.
-- take_plan(plan_key, schedule, slot, id, seen, ts, paused): returns nil
--   after removing one entry of id from the slot, or, with nothing more
--   done:
--   "gone"    plan:<id> no longer exists (its id was dropped from the slot)
--   "taken"   the id is no longer in the slot (another scheduler took it)
--   "paused"  the plan is paused (its id is in the zset paused): the entry
--             leaves the slot unfired, and the plan's paused slot becomes ts
--             when ts is later (a PHP plan whose nextRun was left stale),
--             so that its resume files it where it was due
--   "changed" the plan's JSON is not seen any more (read it again)
--   "wrongtype" plan:<id> holds another type than a string (a key written
--             by hand): the caller parks the id with a failed entry
--             (park_wrong_type)
-- not_a_list(key, what): an error reply naming key when it holds something
--   other than a list (a key written by hand), else nil; take_plan takes
--   the id out before the callers write, so they look first
local function slot_cleanup(schedule, slot, ts)
  if redis.call('LLEN', slot) == 0 then
    redis.call('ZREM', schedule, ts)
  end
end

local function take_plan(plan_key, schedule, slot, id, seen, ts, paused)
  local t = redis.call('TYPE', plan_key)['ok']
  if t ~= 'string' and t ~= 'none' then
    if not redis.call('LPOS', slot, id) then
      slot_cleanup(schedule, slot, ts)
      return 'taken'
    end
    return 'wrongtype'
  end
  local plan = redis.call('GET', plan_key)
  if not plan then
    redis.call('LREM', slot, 1, id)
    slot_cleanup(schedule, slot, ts)
    return 'gone'
  end
  if not redis.call('LPOS', slot, id) then
    slot_cleanup(schedule, slot, ts)
    return 'taken'
  end
  local paused_at = redis.call('ZSCORE', paused, id)
  if paused_at then
    redis.call('LREM', slot, 1, id)
    slot_cleanup(schedule, slot, ts)
    if tonumber(ts) > tonumber(paused_at) then
      redis.call('ZADD', paused, ts, id)
    end
    return 'paused'
  end
  if plan ~= seen then
    return 'changed'
  end
  redis.call('LREM', slot, 1, id)
  return nil
end

local function not_a_list(key, what)
  local t = redis.call('TYPE', key)['ok']
  if t ~= 'list' and t ~= 'none' then
    return redis.error_reply(key .. ' is a ' .. t .. ', not a list: ' .. what)
  end
  return nil
end
