-- finish.lua: record the end of a job a worker slot ran, in one step.
--
-- The key list is as long as the outcome needs (8, 11 or 20 keys), so the
-- common success path sends the fewest bytes. resque-go's per-host, per-queue
-- counters (queuestat:*) are not written here: the worker batches them
-- (rdb.Counters); Ruby's stat:processed counters are, job by job.
-- KEYS[1]  worker:<id>
-- KEYS[2]  resque-go claim-sequence hash (field: worker id)
-- KEYS[3]  stat:processed
-- KEYS[4]  stat:processed:<id>
-- KEYS[5]  job:<id>:status of the finished job (any key when ARGV[4] is "")
-- KEYS[6]  failed
-- KEYS[7]  resque-go attempts counter of the job (any key when ARGV[9] is "")
-- KEYS[8]  resque-go attempts index (zset: counter key -> expiry, Unix s)
-- KEYS[9]  stat:failed                         (fail, retry, reschedule)
-- KEYS[10] stat:failed:<id>
-- KEYS[11] queuestat:<host>:failed:<q>
-- KEYS[12] retries                             (retry, reschedule)
-- KEYS[13] stat:retries
-- KEYS[14] queuestat:<host>:retries:<q>
-- KEYS[15] the source list the job goes back to (queue:<q>)
-- KEYS[16] queues
-- KEYS[17] delayed:<ts> (when pushed through the delayed queue)
-- KEYS[18] timestamps:<item>
-- KEYS[19] delayed_queue_schedule
-- KEYS[20] job:<new id>:status of the retry
-- ARGV[1]  worker id
-- ARGV[2]  claim sequence of the job (from claim.lua)
-- ARGV[3]  outcome: ok | fail | retry | reschedule | discard
-- ARGV[4]  status of the finished job: "" none, or "v3:<status>" / "php:<code>"
-- ARGV[5]  now, Unix seconds
-- ARGV[6]  entry for failed (fail) or retries (retry)
-- ARGV[7]  the job's class (to recognise a false DirtyExit entry)
-- ARGV[8]  queue name (SADD queues; the DirtyExit entry's queue)
-- ARGV[9]  attempts counter: "" leave it, "0" delete it, N > 0 set it to N
-- ARGV[10] TTL of the attempts counter, seconds (its index entry expires then too)
-- ARGV[11] payload to push (retry, reschedule): a queue payload, or the
--          delayed item when ARGV[12] > 0
-- ARGV[12] due time, Unix seconds; 0 pushes to the queue at once
-- ARGV[13] "1" when the retry's status key gets "waiting" (resque-v3)
-- ARGV[14] the timestamps index member, delayed:<ts> (no namespace)
-- ARGV[15] for a job from a serial source: the slot's lock token; "" for
--          any other (the arguments before it are padded to 14: all 16 are
--          always sent, so with finish_claim.lua none is the claim's)
-- ARGV[16] the index in KEYS of that source's lock, queuedata:<q>:lock
--          (after the outcome's keys); 0 without one
-- ARGV[17] for a unique job (protocol.md 8): the index in KEYS of
--          unique:<uid>:state, unique:<uid>:deferred following it (after
--          the lock); 0 for any other job (ARGV[17..19] are always sent)
-- ARGV[18] the namespace prefix "<ns>:" (a released deferred job's keys
--          are built from it: its queue is only known here)
-- ARGV[19] failed_at for an entry recording a deferred payload that
--          cannot be released (no queue, not JSON)
--
-- Unique jobs, only while the uid's state is running (a state someone
-- else set since, e.g. after `resque-go unique clear`, is left alone):
--   ok          state and deferred deleted; a deferred payload is released
--               through the unique path: state queued, pushed to its queue,
--               or to the delayed queue at now + its deferrableBy
--   retry, reschedule
--               the deferred payload is dropped (as the PHP fork did) and
--               the state goes back to queued: the job's next copy is queued
--   fail, discard
--               state and deferred deleted (the PHP fork's removeAll)
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
local function finish_unique(skey, dkey, outcome, ARGV, failed)
  local state = redis.call('GET', skey)
  if not state or string.sub(state, 1, 7) ~= 'running' then
    return
  end
  if outcome == 'ok' then
    local deferred = redis.call('GET', dkey)
    redis.call('DEL', skey, dkey)
    if deferred then
      release_deferred(skey, deferred, ARGV[18], ARGV[5], failed, ARGV[19], ARGV[1], ARGV[8])
    end
  elseif outcome == 'retry' or outcome == 'reschedule' then
    redis.call('DEL', dkey)
    redis.call('SET', skey, 'queued')
  else
    redis.call('DEL', skey, dkey)
  end
end

local function finish(KEYS, ARGV)
  local seq = redis.call('HINCRBY', KEYS[2], ARGV[1], '1')
  if seq ~= tonumber(ARGV[2]) + 1 then
    if seq == 1 then
      redis.call('HDEL', KEYS[2], ARGV[1])
    else
      redis.call('HINCRBY', KEYS[2], ARGV[1], '-1')
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
    local first = math.max(0, redis.call('LLEN', KEYS[6]) - 100)
    local entries = redis.call('LRANGE', KEYS[6], first, -1)
    for i = #entries, 1, -1 do
      local ok, e = pcall(cjson.decode, entries[i])
      if ok and type(e) == 'table' and e['worker'] == ARGV[1] and e['queue'] == ARGV[8]
          and (e['exception'] == 'Resque::DirtyExit' or e['exception'] == 'Resque::PruneDeadWorkerDirtyExit')
          and type(e['payload']) == 'table' and e['payload']['class'] == ARGV[7] then
        redis.call('LREM', KEYS[6], -1, entries[i])
        result = 2
        break
      end
    end
  end
  local outcome = ARGV[3]
  redis.call('INCR', KEYS[3])
  redis.call('INCR', KEYS[4])
  if outcome == 'fail' then
    redis.call('RPUSH', KEYS[6], ARGV[6])
    redis.call('INCR', KEYS[9])
    redis.call('INCR', KEYS[10])
    redis.call('INCR', KEYS[11])
  elseif outcome == 'retry' then
    redis.call('RPUSH', KEYS[12], ARGV[6])
    redis.call('INCR', KEYS[13])
    redis.call('INCR', KEYS[14])
  end
  if ARGV[9] == '0' then
    redis.call('DEL', KEYS[7])
    redis.call('ZREM', KEYS[8], KEYS[7])
  elseif ARGV[9] ~= '' then
    redis.call('SET', KEYS[7], ARGV[9], 'EX', ARGV[10])
    -- the index tells idle claims whether any counter exists at all
    redis.call('ZADD', KEYS[8], tonumber(ARGV[5]) + tonumber(ARGV[10]), KEYS[7])
  end
  if outcome == 'retry' or outcome == 'reschedule' then
    local due = tonumber(ARGV[12])
    if due > 0 then
      redis.call('RPUSH', KEYS[17], ARGV[11])
      redis.call('SADD', KEYS[18], ARGV[14])
      redis.call('ZADD', KEYS[19], due, due)
    else
      redis.call('RPUSH', KEYS[15], ARGV[11])
      local qk = 'queue:' .. ARGV[8]
      if string.sub(KEYS[15], -#qk) == qk then
        -- a Resque queue (not a mass pool's list or a batch) joins queues
        redis.call('SADD', KEYS[16], ARGV[8])
      end
    end
    if ARGV[13] == '1' then
      redis.call('SET', KEYS[20], '{"status":"waiting","updated":' .. ARGV[5] .. '}', 'EX', 86400)
    end
  end
  if ARGV[15] ~= '' then
    -- release the serial lock, if this slot still holds it
    local lock = KEYS[tonumber(ARGV[16])]
    if redis.call('GET', lock) == ARGV[15] then
      redis.call('DEL', lock)
    end
  end
  local ui = tonumber(ARGV[17])
  if ui and ui > 0 then
    finish_unique(KEYS[ui], KEYS[ui + 1], outcome, ARGV, KEYS[6])
  end
  local kind, value = nil, nil
  if ARGV[4] ~= '' then
    kind, value = string.match(ARGV[4], '^(%w+):(.+)$')
  end
  if kind == 'v3' then
    redis.call('SET', KEYS[5], '{"status":"' .. value .. '","updated":' .. ARGV[5] .. '}', 'EX', 86400)
  elseif kind == 'php' then
    local cur = redis.call('GET', KEYS[5])
    if cur then
      local ok, st = pcall(cjson.decode, cur)
      if ok and type(st) == 'table' and type(st['status']) == 'number' then
        st['status'] = tonumber(value)
        st['updated'] = tonumber(ARGV[5])
        if value == '3' or value == '4' then
          -- php-resque expires a finished job's status after a day
          redis.call('SET', KEYS[5], cjson.encode(st), 'EX', 86400)
        else
          redis.call('SET', KEYS[5], cjson.encode(st), 'KEEPTTL')
        end
      end
    end
  end
  return result
end

return finish(KEYS, ARGV)
