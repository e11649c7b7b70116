-- schedule_set_aside.lua: take one member off a schedule zset
-- (delayed_queue_schedule, plan_schedule) that no mover or planner can use:
-- a member that is not a Unix time, or one whose list (delayed:<ts>,
-- plan_schedule:<ts>) is a key of another type. The record of why goes to
-- failed first, so the member never leaves without it; the list key itself
-- is left as it is, for the operator to look at.
--
-- KEYS[1]  the schedule zset
-- KEYS[2]  failed
-- KEYS[3]  the member's list, when it is set aside for that key's type
--          (absent for a member that is not a time)
-- ARGV[1]  the member
-- ARGV[2]  the failed entry ("": nothing recorded, for an operator's clear)
-- ARGV[3]  with KEYS[3]: the type KEYS[3] was seen holding
--
-- Returns 1 (set aside) or 0 (nothing done: the member is no longer on the
-- schedule, or the list's type changed since it was seen: read it again).
-- An error reply, with nothing done, when failed is a key of another type.
if not redis.call('ZSCORE', KEYS[1], ARGV[1]) then
  return 0
end
if KEYS[3] and redis.call('TYPE', KEYS[3])['ok'] ~= ARGV[3] then
  return 0
end
if ARGV[2] ~= '' then
  local pushed = redis.pcall('RPUSH', KEYS[2], ARGV[2])
  if type(pushed) == 'table' and pushed.err then
    return redis.error_reply(KEYS[2] .. ': ' .. pushed.err .. ': ' .. ARGV[1] .. ' stays on ' .. KEYS[1])
  end
end
redis.call('ZREM', KEYS[1], ARGV[1])
return 1
