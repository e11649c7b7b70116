-- plan_fire.lua: fire one plan for one slot and move it to its next slot,
-- in one step, so that each (plan, slot) is enqueued exactly once however
-- many schedulers try it and wherever one of them dies. Nothing here
-- depends on the time: the caller computed the next slot.
--
-- KEYS[1] plan:<id>
-- KEYS[2] plan_schedule
-- KEYS[3] plan_schedule:<ts>, the slot being fired
-- KEYS[4] plan_schedule:<next> (any key when there is no next slot)
-- KEYS[5] queue:<q>
-- KEYS[6] queues
-- KEYS[7] unique:<uid>:state (any key when the job is not unique)
-- KEYS[8] unique:<uid>:deferred (any key when the job is not unique)
-- KEYS[9] resque-go:plans_paused
-- ARGV[1] id, as the slot list holds it
-- ARGV[2] the plan JSON the caller read and computed from ("": it read none)
-- ARGV[3] the plan JSON to write back (nextRun = the next slot)
-- ARGV[4] ts, the slot being fired
-- ARGV[5] next, the next slot ("": none; the plan is kept without a slot)
-- ARGV[6] the job payload ("": the misfire policy skips this slot)
-- ARGV[7] queue name
-- ARGV[8] the job's unique uid ("": not unique)
-- ARGV[9] the payload to park when the uid's job is running, in delayed
--         item form ("": the job is not deferrable)
-- ARGV[10] the unique state of a queued job ("queued")
--
-- Returns:
--   "fired"      the job was pushed and the plan moved on
--   "skipped"    the slot was skipped (misfire policy); the plan moved on
--   "duplicate"  the job's uid is taken: nothing pushed; the plan moved on
--   "deferred"   the uid's job is running and the job is deferrable: it is
--                parked in unique:<uid>:deferred; the plan moved on
--   "changed"    the plan is not what the caller read: nothing done (read
--                it again)
--   "taken"      the id is no longer in this slot (another scheduler fired
--                it): nothing done
-- One entry of the id leaves the slot (the first, found near the head as
-- slots are fired from the head); the caller drops a second entry of an
-- id listed twice (plan_park.lua) since the plan's nextRun is then past
-- this slot.
--   "gone"       the plan no longer exists: its id was dropped from the slot
--   "paused"     the plan is paused: its id left the slot unfired (see
--                plan_take.lua)
--   "wrongtype"  plan:<id> holds another type than a string: nothing done
--                (the caller parks the id with plan_park.lua)
-- An error reply: the queue or the next slot is a key of another type
-- (nothing done), or the queues set is (the job is queued and the plan is
-- in its next slot; only queues is not written). A unique state of
-- another type counts as the uid taken ("duplicate").
local function cleanup()
  slot_cleanup(KEYS[2], KEYS[3], ARGV[4])
end

-- a queue or a next slot of another type (a key written by hand) stops
-- the call before anything is written: the slot fires once the key is
-- fixed (the id leaves this slot before the job is pushed and before it
-- is filed in its next slot)
local refused = ARGV[6] ~= '' and not_a_list(KEYS[5], 'the slot is not fired')
  or ARGV[5] ~= '' and not_a_list(KEYS[4], 'the slot is not fired')
if refused then
  return refused
end

local taken = take_plan(KEYS[1], KEYS[2], KEYS[3], ARGV[1], ARGV[2], ARGV[4], KEYS[9])
if taken then
  return taken
end

local result = 'skipped'
if ARGV[6] ~= '' then
  result = 'fired'
  if ARGV[8] ~= '' and not redis.call('SET', KEYS[7], ARGV[10], 'NX') then
    result = 'duplicate'
    -- a state of another type (written by hand) counts as taken, not
    -- running: an error here would leave the plan out of every slot
    local ok, state = pcall(redis.call, 'GET', KEYS[7])
    if not ok or type(state) ~= 'string' then
      state = ''
    end
    if ARGV[9] ~= '' and string.sub(state, 1, 7) == 'running' and redis.call('SET', KEYS[8], ARGV[9], 'NX') then
      result = 'deferred'
    end
  end
  if result == 'fired' then
    redis.call('RPUSH', KEYS[5], ARGV[6])
  end
end

redis.call('SET', KEYS[1], ARGV[3])
if ARGV[5] ~= '' then
  redis.call('ZADD', KEYS[2], ARGV[5], ARGV[5])
  redis.call('RPUSH', KEYS[4], ARGV[1])
end
cleanup()
if result == 'fired' then
  -- last: a queues set of another type stops the call only once the job
  -- is queued and the plan is in its next slot
  redis.call('SADD', KEYS[6], ARGV[7])
end
return result
