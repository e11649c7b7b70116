-- jobpath/finish_push.lua: where a failed, retried or rescheduled job
-- goes (failed, retries, its source again, the delayed queue) and the wake
-- of a static pool's source it goes back to.
-- finish_push writes where a fail, retry or reschedule sends the job: the
-- failed or retries entry, the job's copy, and what finds the copy
-- (queues, timestamps:<item> and delayed_queue_schedule, or a static
-- pool's ring). It notes in undo each list it pushed to, and a ring state
-- field it set, so that finish can take them back when a key of another
-- type (written by hand) stops it midway.
local function finish_push(KEYS, ARGV, ko, ao, outcome, undo)
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
  local qk = 'queue:' .. ARGV[ao + 8]
  if string.sub(KEYS[ko + 15], -#qk) == qk then
    -- a Resque queue (not a mass pool's list or a batch) joins queues
    rcall('SADD', KEYS[ko + 16], ARGV[ao + 8])
  end
  local ri = tonum(ARGV[ao + 20])
  if ri and ri > 0 then
    -- static_wake, with the state field noted before the ring's push
    local field = 'm:' .. ARGV[ao + 21]
    if rcall('HSETNX', KEYS[ko + ri + 1], field, 'r') == 1 then
      undo.state, undo.field = KEYS[ko + ri + 1], field
      rcall('RPUSH', KEYS[ko + ri], ARGV[ao + 21])
    end
  end
end

