-- finish.lua: record the end of a job a worker slot ran, in one step.
--
-- KEYS[1]  worker:<id>
-- KEYS[2]  stat:processed
-- KEYS[3]  stat:processed:<id>
-- KEYS[4]  queuestat:<host>:processing_time:<q>
-- KEYS[5]  queuestat:<host>:processed:<q>
-- KEYS[6]  failed
-- KEYS[7]  stat:failed
-- KEYS[8]  stat:failed:<id>
-- KEYS[9]  queuestat:<host>:failed:<q>
-- KEYS[10] retries
-- KEYS[11] stat:retries
-- KEYS[12] queuestat:<host>:retries:<q>
-- KEYS[13] queue:<q> the job goes back to (retry, reschedule)
-- KEYS[14] queues
-- KEYS[15] delayed:<ts> (when pushed through the delayed queue)
-- KEYS[16] timestamps:<item>
-- KEYS[17] delayed_queue_schedule
-- KEYS[18] job:<id>:status of the finished job
-- KEYS[19] job:<new id>:status of the retry
-- ARGV[1]  outcome: ok | fail | retry | reschedule | discard
-- ARGV[2]  processing time in whole milliseconds
-- ARGV[3]  entry for failed (fail) or retries (retry)
-- ARGV[4]  payload to push (retry, reschedule): a queue payload, or the
--          delayed item when ARGV[5] > 0
-- ARGV[5]  due time, Unix seconds; 0 pushes to the queue at once
-- ARGV[6]  queue name (SADD queues)
-- ARGV[7]  status of the finished job: "" none, or "v3:<status>" / "php:<n>"
-- ARGV[8]  now, Unix seconds
-- ARGV[9]  "1" when the retry's status key gets "waiting" (resque-v3)
--
-- Returns 1, or 0 when worker:<id> no longer exists: the job was recovered by
-- a pruner meanwhile (or an earlier attempt of this call already ran), so
-- nothing is written twice.
if redis.call('DEL', KEYS[1]) == 0 then
  return 0
end
local outcome = ARGV[1]
redis.call('INCRBY', KEYS[2], 1)
redis.call('INCRBY', KEYS[3], 1)
redis.call('INCRBY', KEYS[4], tonumber(ARGV[2]))
if outcome == 'ok' or outcome == 'reschedule' or outcome == 'discard' then
  redis.call('INCRBY', KEYS[5], 1)
elseif outcome == 'fail' then
  redis.call('RPUSH', KEYS[6], ARGV[3])
  redis.call('INCRBY', KEYS[7], 1)
  redis.call('INCRBY', KEYS[8], 1)
  redis.call('INCRBY', KEYS[9], 1)
elseif outcome == 'retry' then
  redis.call('RPUSH', KEYS[10], ARGV[3])
  redis.call('INCRBY', KEYS[11], 1)
  redis.call('INCRBY', KEYS[12], 1)
end
if outcome == 'retry' or outcome == 'reschedule' then
  local due = tonumber(ARGV[5])
  if due > 0 then
    redis.call('RPUSH', KEYS[15], ARGV[4])
    redis.call('SADD', KEYS[16], 'delayed:' .. ARGV[5])
    redis.call('ZADD', KEYS[17], due, due)
  else
    redis.call('RPUSH', KEYS[13], ARGV[4])
    redis.call('SADD', KEYS[14], ARGV[6])
  end
end
local now = tonumber(ARGV[8])
local kind, value = string.match(ARGV[7], '^(%w+):(.+)$')
if kind == 'v3' then
  redis.call('SET', KEYS[18], '{"status":"' .. value .. '","updated":' .. now .. '}', 'EX', 86400)
elseif kind == 'php' then
  local cur = redis.call('GET', KEYS[18])
  if cur then
    local ok, st = pcall(cjson.decode, cur)
    if ok and type(st) == 'table' and type(st['status']) == 'number' then
      st['status'] = tonumber(value)
      st['updated'] = now
      redis.call('SET', KEYS[18], cjson.encode(st), 'EX', 86400)
    end
  end
end
if ARGV[9] == '1' then
  redis.call('SET', KEYS[19], '{"status":"waiting","updated":' .. now .. '}', 'EX', 86400)
end
return 1
