-- jobpath/finish.lua: the core finish: record the end of a job a worker slot ran, in one step.
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
-- ARGV[17] for a unique job (docs/protocol.md#unique-jobs): the index in KEYS of
--          unique:<uid>:state, unique:<uid>:deferred following it (after
--          the lock); 0 for any other job (ARGV[17..19] are always sent)
-- ARGV[18] the namespace prefix "<ns>:" (a released deferred job's keys
--          are built from it: its queue is only known here)
-- ARGV[19] failed_at for an entry recording a deferred payload that
--          cannot be released (no queue, not JSON)
-- ARGV[20] for a retry or reschedule pushed at once into a static pool
--          source's FIFO: the index in KEYS of the pool's ring,
--          static:ring:<pool>, its state hash following (after the unique
--          keys); 0 for any other (ARGV[20..21] are always sent)
-- ARGV[21] that source's id (put back on the ring as static_wake.lua does)
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
--   6  a fail, retry or reschedule whose destination (failed, retries,
--      the job's source or the delayed queue, or their indexes: queues,
--      timestamps:<item>, delayed_queue_schedule, a static ring and its
--      state) is a key of another type: what the finish pushed before it
--      met the key is taken back, the job stays in worker:<id> and the
--      caller tries again once the key is fixed (a set or zset member
--      added on the way stays: harmless without its list entry)
-- The body is the function finish(KEYS, ARGV, ko, ao, batched) so
-- finish_claim.lua and finish_claim_batch.lua can reuse it: its keys and
-- arguments start after the first ko keys and ao arguments (none when run
-- alone; KEYS[n] and ARGV[n] above are relative to them), and batched
-- leaves stat:processed to the caller (one INCRBY for the whole batch).
local function finish(KEYS, ARGV, ko, ao, batched)
  ko, ao = ko or 0, ao or 0
  local outcome = ARGV[ao + 3]
  local result
  if outcome == 'fail' or outcome == 'retry' or outcome == 'reschedule' then
    -- The job's writes come before its record goes: Redis keeps what a
    -- script wrote before an error, so a push failing after the record
    -- went would lose the job. A key of another type (written by hand)
    -- stops the pushes; what they wrote is taken back and the finish
    -- returns 6 with nothing written: the job stays in worker:<id>.
    local seqs, wid = KEYS[ko + 2], ARGV[ao + 1]
    if not finish_move(seqs, wid, ARGV[ao + 2]) then
      return 0
    end
    local undo = {}
    if not pcall(finish_push, KEYS, ARGV, ko, ao, outcome, undo) then
      for i = 1, #undo do
        rcall('RPOP', undo[i])
      end
      if undo.state then
        rcall('HDEL', undo.state, undo.field)
      end
      rcall('HINCRBY', seqs, wid, '-1')
      return 6
    end
    result = 1
    if rcall('DEL', KEYS[ko + 1]) == 0 then
      local skip = 0
      if outcome == 'fail' then
        skip = 1
      end
      result = finish_removed(seqs, KEYS[ko + 6], wid, ARGV[ao + 7], ARGV[ao + 8], skip)
    end
  else
    result = finish_head(KEYS[ko + 2], KEYS[ko + 1], KEYS[ko + 6], ARGV[ao + 1], ARGV[ao + 2], ARGV[ao + 7], ARGV[ao + 8])
    if result == 0 then
      return 0
    end
  end
  -- the counters after the job's writes: a counter that is no integer
  -- stops the script only once the job is where it goes
  if not batched then
    rcall('INCR', KEYS[ko + 3])
  end
  rcall('INCR', KEYS[ko + 4])
  if outcome == 'fail' then
    rcall('INCR', KEYS[ko + 9])
    rcall('INCR', KEYS[ko + 10])
    rcall('INCR', KEYS[ko + 11])
  elseif outcome == 'retry' then
    rcall('INCR', KEYS[ko + 13])
    rcall('INCR', KEYS[ko + 14])
  end
  finish_attempts(KEYS, ARGV, ko, ao)
  if (outcome == 'retry' or outcome == 'reschedule') and ARGV[ao + 13] == '1' then
    rcall('SET', KEYS[ko + 20], '{"status":"waiting","updated":' .. ARGV[ao + 5] .. '}', 'EX', '86400')
  end
  if ARGV[ao + 15] ~= '' then
    -- release the serial lock, if this slot still holds it
    local lock = KEYS[ko + tonum(ARGV[ao + 16])]
    if rcall('GET', lock) == ARGV[ao + 15] then
      rcall('DEL', lock)
    end
  end
  local ui = tonum(ARGV[ao + 17])
  if ui and ui > 0 then
    finish_unique(KEYS[ko + ui], KEYS[ko + ui + 1], outcome, ARGV, ao, KEYS[ko + 6])
  end
  finish_status(KEYS, ARGV, ko, ao)
  return result
end

