-- finish.lua: record the end of a job a worker slot ran, in one step.
--
-- The key list is as long as the outcome needs (8, 12 or 21 keys), so the
-- common success path sends the fewest bytes.
-- KEYS[1]  worker:<id>
-- KEYS[2]  resque-go claim-sequence hash (field: worker id)
-- KEYS[3]  stat:processed
-- KEYS[4]  stat:processed:<id>
-- KEYS[5]  queuestat:<host>:processing_time:<q>
-- KEYS[6]  queuestat:<host>:processed:<q>
-- KEYS[7]  job:<id>:status of the finished job (any key when ARGV[5] is "")
-- KEYS[8]  failed                              (fail, retry, reschedule)
-- KEYS[9]  stat:failed
-- KEYS[10] stat:failed:<id>
-- KEYS[11] queuestat:<host>:failed:<q>
-- KEYS[12] retries                             (retry, reschedule)
-- KEYS[13] stat:retries
-- KEYS[14] queuestat:<host>:retries:<q>
-- KEYS[15] queue:<q> the job goes back to
-- KEYS[16] queues
-- KEYS[17] delayed:<ts> (when pushed through the delayed queue)
-- KEYS[18] timestamps:<item>
-- KEYS[19] delayed_queue_schedule
-- KEYS[20] job:<new id>:status of the retry
-- ARGV[1]  worker id
-- ARGV[2]  claim sequence of the job (from claim.lua)
-- ARGV[3]  outcome: ok | fail | retry | reschedule | discard
-- ARGV[4]  processing time in whole milliseconds
-- ARGV[5]  status of the finished job: "" none, or "v3:<status>" / "php:<code>"
-- ARGV[6]  now, Unix seconds
-- ARGV[7]  entry for failed (fail) or retries (retry)
-- ARGV[8]  payload to push (retry, reschedule): a queue payload, or the
--          delayed item when ARGV[9] > 0
-- ARGV[9]  due time, Unix seconds; 0 pushes to the queue at once
-- ARGV[10] queue name (SADD queues)
-- ARGV[11] "1" when the retry's status key gets "waiting" (resque-v3)
-- ARGV[12] the timestamps index member, delayed:<ts> (no namespace)
--
-- Returns 1, or 0 when worker:<id> no longer holds that claim: the job was
-- recovered by a pruner meanwhile, or an earlier attempt of this call
-- already ran (and maybe claimed the next job), so nothing is written twice.
-- The body is the function finish(KEYS, ARGV) so finish_claim.lua can reuse it.
local function finish(KEYS, ARGV)
  if redis.call('HGET', KEYS[2], ARGV[1]) ~= ARGV[2] or redis.call('DEL', KEYS[1]) == 0 then
    return 0
  end
  local outcome = ARGV[3]
  redis.call('INCRBY', KEYS[3], 1)
  redis.call('INCRBY', KEYS[4], 1)
  redis.call('INCRBY', KEYS[5], tonumber(ARGV[4]))
  if outcome == 'ok' or outcome == 'reschedule' or outcome == 'discard' then
    redis.call('INCRBY', KEYS[6], 1)
  elseif outcome == 'fail' then
    redis.call('RPUSH', KEYS[8], ARGV[7])
    redis.call('INCRBY', KEYS[9], 1)
    redis.call('INCRBY', KEYS[10], 1)
    redis.call('INCRBY', KEYS[11], 1)
  elseif outcome == 'retry' then
    redis.call('RPUSH', KEYS[12], ARGV[7])
    redis.call('INCRBY', KEYS[13], 1)
    redis.call('INCRBY', KEYS[14], 1)
  end
  if outcome == 'retry' or outcome == 'reschedule' then
    local due = tonumber(ARGV[9])
    if due > 0 then
      redis.call('RPUSH', KEYS[17], ARGV[8])
      redis.call('SADD', KEYS[18], ARGV[12])
      redis.call('ZADD', KEYS[19], due, due)
    else
      redis.call('RPUSH', KEYS[15], ARGV[8])
      redis.call('SADD', KEYS[16], ARGV[10])
    end
    if ARGV[11] == '1' then
      redis.call('SET', KEYS[20], '{"status":"waiting","updated":' .. ARGV[6] .. '}', 'EX', 86400)
    end
  end
  local kind, value = string.match(ARGV[5], '^(%w+):(.+)$')
  if kind == 'v3' then
    redis.call('SET', KEYS[7], '{"status":"' .. value .. '","updated":' .. ARGV[6] .. '}', 'EX', 86400)
  elseif kind == 'php' then
    local cur = redis.call('GET', KEYS[7])
    if cur then
      local ok, st = pcall(cjson.decode, cur)
      if ok and type(st) == 'table' and type(st['status']) == 'number' then
        st['status'] = tonumber(value)
        st['updated'] = tonumber(ARGV[6])
        redis.call('SET', KEYS[7], cjson.encode(st), 'EX', 86400)
      end
    end
  end
  return 1
end

return finish(KEYS, ARGV)
