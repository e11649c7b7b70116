-- prune.lua: unregister a dead worker and recover the job it held.
--
-- KEYS[1]  workers
-- KEYS[2]  worker:<id>
-- KEYS[3]  worker:<id>:started
-- KEYS[4]  stat:processed:<id>
-- KEYS[5]  stat:failed:<id>
-- KEYS[6]  workers:heartbeat
-- KEYS[7]  resque-go heartbeat-interval hash
-- KEYS[8]  the held job's source list, queue:<q> (any key when none)
-- KEYS[9]  recovery counter of the held payload (any key when none)
-- KEYS[10] failed
-- KEYS[11] queuestat:<host>:failed:<q>
-- KEYS[12] resque-go claim-sequence hash
-- KEYS[13] unique:<uid>:state of the held job (any key when it has no uid)
-- KEYS[14] unique:<uid>:deferred
-- ARGV[1]  worker id
-- ARGV[2]  heartbeat value the caller judged dead ("" = none)
-- ARGV[3]  worker:<id> value the caller read ("" = idle)
-- ARGV[4]  raw payload to push back
-- ARGV[5]  how many recoveries requeue before the job fails (0: always fail)
-- ARGV[6]  failed entry to record instead of requeueing
-- ARGV[7]  TTL of the recovery counter, seconds
-- ARGV[8]  "1" when the held job is unique (docs/protocol.md#unique-jobs), "" otherwise:
--          while its uid is running, a requeue sets it back to queued
--          (the deferred job waits on), a failure clears it (state and
--          deferred job, as the PHP fork did on failure)
-- KEYS[15] static:ring:<pool> when the job goes back into a static pool
--          source's FIFO (any key else)
-- KEYS[16] static:state:<pool> (any key else)
-- ARGV[9]  that source's id, "" for any other source (jobpath/effect_wake.lua)
-- Then the sections of ends.lua that apply to the held job, applied once
-- it is requeued or failed: its caps' slots freed, and its event; when it
-- is failed, its end settled for the jobs waiting for it and its group
-- (as the finish of a failed job does).
--
-- Returns "gone" (not registered any more), "alive" (heartbeat or job
-- changed since the caller looked: nothing done), "idle" (unregistered, no
-- job), "requeued" or "failed".
if redis.call('SISMEMBER', KEYS[1], ARGV[1]) == 0 and redis.call('EXISTS', KEYS[2]) == 0 then
  return 'gone'
end
local hb = redis.call('HGET', KEYS[6], ARGV[1]) or ''
local held = redis.call('GET', KEYS[2]) or ''
if hb ~= ARGV[2] or held ~= ARGV[3] then
  return 'alive'
end
local result = 'idle'
if held ~= '' then
  local n = redis.call('INCR', KEYS[9])
  redis.call('EXPIRE', KEYS[9], tonumber(ARGV[7]))
  -- the unique state as a string: one of another type (a key written by
  -- hand) is nobody's, and an error after the push would push again at
  -- the next pass
  local running = ARGV[8] == '1' and unique_running(KEYS[13])
  if n <= tonumber(ARGV[5]) then
    -- woken before the push (all or nothing: jobpath/effect_wake.lua); an error
    -- leaves the job in worker:<id> for the next pass
    if ARGV[9] ~= '' then
      static_wake(KEYS[15], KEYS[16], ARGV[9])
    end
    redis.call('LPUSH', KEYS[8], ARGV[4])
    result = 'requeued'
    if running then
      redis.call('SET', KEYS[13], 'queued')
    end
  else
    redis.call('RPUSH', KEYS[10], ARGV[6])
    redis.call('DEL', KEYS[9])
    redis.call('INCRBY', KEYS[11], 1)
    result = 'failed'
    if running then
      redis.call('DEL', KEYS[13], KEYS[14])
    end
  end
end
redis.call('SREM', KEYS[1], ARGV[1])
redis.call('DEL', KEYS[2], KEYS[3], KEYS[4], KEYS[5])
redis.call('HDEL', KEYS[6], ARGV[1])
redis.call('HDEL', KEYS[7], ARGV[1])
redis.call('HDEL', KEYS[12], ARGV[1])
-- after the job's and the worker's own writes (Redis keeps what a script
-- wrote before an error: the job is never pushed twice)
if held ~= '' then
  hot_globals()
  ends_apply(KEYS, ARGV, 16, 9, ARGV[1], result == 'failed')
end
return result
