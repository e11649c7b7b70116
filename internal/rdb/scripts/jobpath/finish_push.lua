-- jobpath/finish_push.lua: where a failed, retried or rescheduled job
-- goes (failed, retries, its source again, the delayed queue; the keys of
-- the finish's outcome, finish.lua), the queues set a Resque queue it goes
-- back to joins, and the wake of a static pool's source (effect_wake.lua).
--
-- Layout, a section of the finish's effects (finish.lua), sent only for a
-- retry or reschedule pushed at once to a Resque queue (not a mass pool's
-- list or a batch): the queue joins queues (the finish's KEYS[+12])
-- ARGV[+0] tag "q"
--
-- finish_push writes where a fail, retry or reschedule sends the job: the
-- failed or retries entry, the job's copy, and what finds the copy
-- (queues, timestamps:<item> and delayed_queue_schedule, or a static
-- pool's ring; fx, the effects' sections). It notes in undo each
-- list it pushed to, so that finish can take them back when a key of
-- another type (written by hand) stops it midway.
local function finish_push(KEYS, ARGV, ko, ao, outcome, undo, fx)
  if outcome == 'fail' then
    rcall('RPUSH', KEYS[ko + 5], ARGV[ao + 5])
    return
  end
  if outcome == 'retry' then
    rcall('RPUSH', KEYS[ko + 9], ARGV[ao + 5])
    undo[#undo + 1] = KEYS[ko + 9]
  end
  local due = tonum(ARGV[ao + 9])
  if due > 0 then
    local e = fx.d
    finish_delayed(KEYS[e[1]], KEYS[e[1] + 1], KEYS[e[1] + 2], ARGV[ao + 8], due, ARGV[e[2]], undo)
    return
  end
  rcall('RPUSH', KEYS[ko + 12], ARGV[ao + 8])
  undo[#undo + 1] = KEYS[ko + 12]
  if fx.q then
    -- a Resque queue (not a mass pool's list or a batch) joins queues
    rcall('SADD', KEYS[ko + 13], ARGV[ao + 7])
  end
  local e = fx.w
  if e then
    -- all or nothing: a ring or state of another type stops it before it
    -- writes, and finish takes the push above back
    static_wake(KEYS[e[1]], KEYS[e[1] + 1], ARGV[e[2]])
  end
end
