-- finish.lua: record the end of a job a worker slot ran, in one step.
--
-- The key list is as long as the outcome needs (6, 10 or 19 keys), so the
-- common success path sends the fewest bytes.
-- KEYS[1]  worker:<id>
-- KEYS[2]  stat:processed
-- KEYS[3]  stat:processed:<id>
-- KEYS[4]  queuestat:<host>:processing_time:<q>
-- KEYS[5]  queuestat:<host>:processed:<q>
-- KEYS[6]  job:<id>:status of the finished job (any key when ARGV[3] is "")
-- KEYS[7]  failed                              (fail, retry, reschedule)
-- KEYS[8]  stat:failed
-- KEYS[9]  stat:failed:<id>
-- KEYS[10] queuestat:<host>:failed:<q>
-- KEYS[11] retries                             (retry, reschedule)
-- KEYS[12] stat:retries
-- KEYS[13] queuestat:<host>:retries:<q>
-- KEYS[14] queue:<q> the job goes back to
-- KEYS[15] queues
-- KEYS[16] delayed:<ts> (when pushed through the delayed queue)
-- KEYS[17] timestamps:<item>
-- KEYS[18] delayed_queue_schedule
-- KEYS[19] job:<new id>:status of the retry
-- ARGV[1]  outcome: ok | fail | retry | reschedule | discard
-- ARGV[2]  processing time in whole milliseconds
-- ARGV[3]  status of the finished job: "" none, or "v3:<status>" / "php:<code>"
-- ARGV[4]  now, Unix seconds
-- ARGV[5]  entry for failed (fail) or retries (retry)
-- ARGV[6]  payload to push (retry, reschedule): a queue payload, or the
--          delayed item when ARGV[7] > 0
-- ARGV[7]  due time, Unix seconds; 0 pushes to the queue at once
-- ARGV[8]  queue name (SADD queues)
-- ARGV[9]  "1" when the retry's status key gets "waiting" (resque-v3)
-- ARGV[10] the timestamps index member, delayed:<ts> (no namespace)
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
  redis.call('RPUSH', KEYS[7], ARGV[5])
  redis.call('INCRBY', KEYS[8], 1)
  redis.call('INCRBY', KEYS[9], 1)
  redis.call('INCRBY', KEYS[10], 1)
elseif outcome == 'retry' then
  redis.call('RPUSH', KEYS[11], ARGV[5])
  redis.call('INCRBY', KEYS[12], 1)
  redis.call('INCRBY', KEYS[13], 1)
end
if outcome == 'retry' or outcome == 'reschedule' then
  local due = tonumber(ARGV[7])
  if due > 0 then
    redis.call('RPUSH', KEYS[16], ARGV[6])
    redis.call('SADD', KEYS[17], ARGV[10])
    redis.call('ZADD', KEYS[18], due, due)
  else
    redis.call('RPUSH', KEYS[14], ARGV[6])
    redis.call('SADD', KEYS[15], ARGV[8])
  end
  if ARGV[9] == '1' then
    redis.call('SET', KEYS[19], '{"status":"waiting","updated":' .. ARGV[4] .. '}', 'EX', 86400)
  end
end
local kind, value = string.match(ARGV[3], '^(%w+):(.+)$')
if kind == 'v3' then
  redis.call('SET', KEYS[6], '{"status":"' .. value .. '","updated":' .. ARGV[4] .. '}', 'EX', 86400)
elseif kind == 'php' then
  local cur = redis.call('GET', KEYS[6])
  if cur then
    local ok, st = pcall(cjson.decode, cur)
    if ok and type(st) == 'table' and type(st['status']) == 'number' then
      st['status'] = tonumber(value)
      st['updated'] = tonumber(ARGV[4])
      redis.call('SET', KEYS[6], cjson.encode(st), 'EX', 86400)
    end
  end
end
return 1
