-- finish.lua: record the end of a job a worker slot ran, in one step.
--
-- The key list is as long as the outcome needs (9, 12 or 21 keys), so the
-- common success path sends the fewest bytes.
-- KEYS[1]  worker:<id>
-- KEYS[2]  resque-go claim-sequence hash (field: worker id)
-- KEYS[3]  stat:processed
-- KEYS[4]  stat:processed:<id>
-- KEYS[5]  queuestat:<host>:processing_time:<q>
-- KEYS[6]  queuestat:<host>:processed:<q>
-- KEYS[7]  job:<id>:status of the finished job (any key when ARGV[5] is "")
-- KEYS[8]  failed
-- KEYS[9]  resque-go attempts counter of the job (any key when ARGV[10] is "")
-- KEYS[10] stat:failed                         (fail, retry, reschedule)
-- KEYS[11] stat:failed:<id>
-- KEYS[12] queuestat:<host>:failed:<q>
-- KEYS[13] retries                             (retry, reschedule)
-- KEYS[14] stat:retries
-- KEYS[15] queuestat:<host>:retries:<q>
-- KEYS[16] queue:<q> the job goes back to
-- KEYS[17] queues
-- KEYS[18] delayed:<ts> (when pushed through the delayed queue)
-- KEYS[19] timestamps:<item>
-- KEYS[20] delayed_queue_schedule
-- KEYS[21] job:<new id>:status of the retry
-- ARGV[1]  worker id
-- ARGV[2]  claim sequence of the job (from claim.lua)
-- ARGV[3]  outcome: ok | fail | retry | reschedule | discard
-- ARGV[4]  processing time in whole milliseconds
-- ARGV[5]  status of the finished job: "" none, or "v3:<status>" / "php:<code>"
-- ARGV[6]  now, Unix seconds
-- ARGV[7]  entry for failed (fail) or retries (retry)
-- ARGV[8]  the job's class (to recognise a false DirtyExit entry)
-- ARGV[9]  queue name (SADD queues; the DirtyExit entry's queue)
-- ARGV[10] attempts counter: "" leave it, "0" delete it, N > 0 set it to N
-- ARGV[11] TTL of the attempts counter, seconds
-- ARGV[12] payload to push (retry, reschedule): a queue payload, or the
--          delayed item when ARGV[13] > 0
-- ARGV[13] due time, Unix seconds; 0 pushes to the queue at once
-- ARGV[14] "1" when the retry's status key gets "waiting" (resque-v3)
-- ARGV[15] the timestamps index member, delayed:<ts> (no namespace)
--
-- The claim sequence moves on with every finish, so a finish is applied at
-- most once: a call retried after a lost reply finds another sequence.
--
-- Returns:
--   0  the claim is not ours any more: recovered by a resque-go pruner
--      (which drops the sequence), requeued by a hard stop, or this call
--      already ran; nothing is written
--   1  recorded
--   2  recorded, but worker:<id> had been removed while the job ran by
--      someone else (Ruby Resque's or php-resque's startup prune of a
--      same-host worker whose pid it does not recognise); the false
--      Resque::DirtyExit entry Ruby wrote for the job was removed
--   3  as 2, with no such entry to remove (php-resque writes none)
-- The body is the function finish(KEYS, ARGV) so finish_claim.lua can reuse it.
local function finish(KEYS, ARGV)
  local seq = redis.call('HINCRBY', KEYS[2], ARGV[1], 1)
  if seq ~= tonumber(ARGV[2]) + 1 then
    if seq == 1 then
      redis.call('HDEL', KEYS[2], ARGV[1])
    else
      redis.call('HINCRBY', KEYS[2], ARGV[1], -1)
    end
    return 0
  end
  local result = 1
  if redis.call('DEL', KEYS[1]) == 0 then
    -- Removed by another runtime's prune: Ruby recorded the job it read
    -- there as DirtyExit ("Job still being processed"). Remove that entry
    -- (the newest one for this worker id, job class and queue) and record
    -- the real outcome below.
    result = 3
    local first = math.max(0, redis.call('LLEN', KEYS[8]) - 100)
    local entries = redis.call('LRANGE', KEYS[8], first, -1)
    for i = #entries, 1, -1 do
      local ok, e = pcall(cjson.decode, entries[i])
      if ok and type(e) == 'table' and e['worker'] == ARGV[1] and e['queue'] == ARGV[9]
          and (e['exception'] == 'Resque::DirtyExit' or e['exception'] == 'Resque::PruneDeadWorkerDirtyExit')
          and type(e['payload']) == 'table' and e['payload']['class'] == ARGV[8] then
        redis.call('LREM', KEYS[8], -1, entries[i])
        result = 2
        break
      end
    end
  end
  local outcome = ARGV[3]
  redis.call('INCRBY', KEYS[3], 1)
  redis.call('INCRBY', KEYS[4], 1)
  redis.call('INCRBY', KEYS[5], tonumber(ARGV[4]))
  if outcome == 'ok' or outcome == 'reschedule' or outcome == 'discard' then
    redis.call('INCRBY', KEYS[6], 1)
  elseif outcome == 'fail' then
    redis.call('RPUSH', KEYS[8], ARGV[7])
    redis.call('INCRBY', KEYS[10], 1)
    redis.call('INCRBY', KEYS[11], 1)
    redis.call('INCRBY', KEYS[12], 1)
  elseif outcome == 'retry' then
    redis.call('RPUSH', KEYS[13], ARGV[7])
    redis.call('INCRBY', KEYS[14], 1)
    redis.call('INCRBY', KEYS[15], 1)
  end
  if ARGV[10] == '0' then
    redis.call('DEL', KEYS[9])
  elseif ARGV[10] ~= '' then
    redis.call('SET', KEYS[9], ARGV[10], 'EX', tonumber(ARGV[11]))
  end
  if outcome == 'retry' or outcome == 'reschedule' then
    local due = tonumber(ARGV[13])
    if due > 0 then
      redis.call('RPUSH', KEYS[18], ARGV[12])
      redis.call('SADD', KEYS[19], ARGV[15])
      redis.call('ZADD', KEYS[20], due, due)
    else
      redis.call('RPUSH', KEYS[16], ARGV[12])
      redis.call('SADD', KEYS[17], ARGV[9])
    end
    if ARGV[14] == '1' then
      redis.call('SET', KEYS[21], '{"status":"waiting","updated":' .. ARGV[6] .. '}', 'EX', 86400)
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
        if value == '3' or value == '4' then
          -- php-resque expires a finished job's status after a day
          redis.call('SET', KEYS[7], cjson.encode(st), 'EX', 86400)
        else
          redis.call('SET', KEYS[7], cjson.encode(st), 'KEEPTTL')
        end
      end
    end
  end
  return result
end

return finish(KEYS, ARGV)
