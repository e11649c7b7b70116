-- enqueue_unique.lua: enqueue a unique job (docs/protocol.md#unique-jobs), in one step.
--
-- KEYS[1] unique:<uid>:state
-- KEYS[2] unique:<uid>:deferred
-- KEYS[3] where the job goes: queue:<q>, or delayed:<ts>
-- KEYS[4] queues, or timestamps:<item> for a delayed job
-- KEYS[5] delayed_queue_schedule (any key for a job pushed at once)
-- ARGV[1] what is pushed: the payload, or the delayed item
-- ARGV[2] the queue name (SADD queues), or the index member delayed:<ts>
-- ARGV[3] ts, Unix seconds, for a delayed job; "" for a job pushed at once
-- ARGV[4] the payload to park when deferred (it names its queue); "" when
--         the job is not deferrable
-- ARGV[5] "L" pushes to the head of KEYS[3] and records no queue (a mass
--         queue's unassigned, which producers LPUSH); "" as above
-- ARGV[6] for a delayed job: seconds the queued state lives, until a day
--         after the job is due (see below)
--
-- Returns:
--   "queued"     the state was free: it is now queued and the job pushed
--   "deferred"   the uid's job is running and this job is deferrable: it
--                is parked in unique:<uid>:deferred, released when that
--                job succeeds
--   "duplicate"  the uid's job is queued (or running and this job is not
--                deferrable): nothing written
--   "deferred_taken" the uid's job is running and another job is already
--                parked (the first one wins): nothing written
-- A delayed job's queued state expires a day after its due time:
-- a promoter that rebuilds items from class, args and queue alone (Ruby's
-- resque-scheduler, node-resque's scheduler) drops the unique field, so no
-- claim would ever move that state on. Our claim's SET clears the expiry.
local taken
if ARGV[3] ~= '' then
  taken = redis.call('SET', KEYS[1], 'queued', 'NX', 'EX', ARGV[6])
else
  taken = redis.call('SET', KEYS[1], 'queued', 'NX')
end
if taken then
  if ARGV[5] == 'L' then
    redis.call('LPUSH', KEYS[3], ARGV[1])
    return 'queued'
  end
  redis.call('RPUSH', KEYS[3], ARGV[1])
  if ARGV[3] ~= '' then
    redis.call('SADD', KEYS[4], ARGV[2])
    redis.call('ZADD', KEYS[5], ARGV[3], ARGV[3])
  else
    redis.call('SADD', KEYS[4], ARGV[2])
  end
  return 'queued'
end
if ARGV[4] == '' then
  return 'duplicate'
end
local state = redis.call('GET', KEYS[1]) or ''
if string.sub(state, 1, 7) ~= 'running' then
  return 'duplicate'
end
if redis.call('SET', KEYS[2], ARGV[4], 'NX') then
  return 'deferred'
end
return 'deferred_taken'
