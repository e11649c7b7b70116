-- jobpath/finish_push.lua: where a failed, retried or rescheduled job
-- goes (failed, retries, its source again, the delayed queue; the keys of
-- the finish's outcome, finish.lua), the queues set a Resque queue it goes
-- back to joins, and the wake of a static pool's source (effect_wake.lua).
--
-- Layout, a section of the finish's effects (finish.lua), sent only for a
-- retry or reschedule pushed at once to a Resque queue (not a mass pool's
-- list or a batch): the queue joins queues (the finish's KEYS[+15])
-- ARGV[+0] tag "q"
--
-- finish_push writes where a fail, retry or reschedule sends the job: the
-- failed or retries entry, the job's copy, and what finds the copy
-- (queues, timestamps:<item> and delayed_queue_schedule, or a static
-- pool's ring: wk and wa, the wake's section). It notes in undo each
-- list it pushed to, so that finish can take them back when a key of
-- another type (written by hand) stops it midway.
local function finish_push(KEYS, ARGV, ko, ao, outcome, undo, joins, wk, wa)
  if outcome == 'fail' then
    rcall('RPUSH', KEYS[ko + 6], ARGV[ao + 6])
    return
  end
  if outcome == 'retry' then
    rcall('RPUSH', KEYS[ko + 12], ARGV[ao + 6])
    undo[#undo + 1] = KEYS[ko + 12]
  end
  local due = tonum(ARGV[ao + 12])
  if due > 0 then
    rcall('RPUSH', KEYS[ko + 17], ARGV[ao + 11])
    undo[#undo + 1] = KEYS[ko + 17]
    rcall('SADD', KEYS[ko + 18], ARGV[ao + 14])
    rcall('ZADD', KEYS[ko + 19], due, due)
    return
  end
  rcall('RPUSH', KEYS[ko + 15], ARGV[ao + 11])
  undo[#undo + 1] = KEYS[ko + 15]
  if joins then
    -- a Resque queue (not a mass pool's list or a batch) joins queues
    rcall('SADD', KEYS[ko + 16], ARGV[ao + 8])
  end
  if wk then
    -- all or nothing: a ring or state of another type stops it before it
    -- writes, and finish takes the push above back
    static_wake(KEYS[wk], KEYS[wk + 1], ARGV[wa])
  end
end

