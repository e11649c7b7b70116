-- plan_resume.lua: resume a paused plan: file its id again in the slot it
-- was paused at, in one step. A slot that passed while it was paused is a
-- missed slot: the planner fires it by the plan's misfire policy
-- (coalesce: one job, catch-up: every missed slot, skip: none more than
-- the grace late).
--
-- KEYS[1] plan:<id>
-- KEYS[2] plan_schedule
-- KEYS[3] plan_schedule:<ts>
-- KEYS[4] resque-go:plans_paused
-- ARGV[1] id
-- ARGV[2] ts, the paused slot the caller read ("0": the plan had no
--         next slot; it is only taken out of plans_paused)
--
-- Returns "resumed", "running" (not paused: nothing done), "gone" (no
-- plan:<id>: its paused entry is dropped) or "changed" (its paused slot is
-- not ts any more: read it again). A slot key of another type than a list
-- is an error reply, with nothing done.
local at = redis.call('ZSCORE', KEYS[4], ARGV[1])
if not at then
  return 'running'
end
if tonumber(at) ~= tonumber(ARGV[2]) then
  return 'changed'
end
if redis.call('EXISTS', KEYS[1]) == 0 then
  redis.call('ZREM', KEYS[4], ARGV[1])
  return 'gone'
end
local t = redis.call('TYPE', KEYS[3])['ok']
if t ~= 'list' and t ~= 'none' then
  return redis.error_reply(KEYS[3] .. ' is a ' .. t .. ', not a list: the plan is not resumed')
end
redis.call('ZREM', KEYS[4], ARGV[1])
if ARGV[2] ~= '0' then
  redis.call('ZADD', KEYS[2], ARGV[2], ARGV[2])
  redis.call('RPUSH', KEYS[3], ARGV[1])
end
return 'resumed'
