-- jobpath/finish.lua: the core finish: record the end of a job a worker slot ran, in one step.
--
-- The lists are as long as the outcome and the job's effects need, so the
-- common success path sends the fewest bytes. resque-go's per-host, per-queue
-- counters (queuestat:*) are not written here: the worker batches them
-- (rdb.Counters); Ruby's stat:processed counters are, job by job.
-- Layout (Go: jobpath_finish.go), from the finish's base (KEYS[+n] and
-- ARGV[+n] are KEYS[ko+1+n] and ARGV[ao+1+n]):
-- KEYS[+0]  worker:<id>
-- KEYS[+1]  claim-sequences           resque-go's hash (field: worker id)
-- KEYS[+2]  stat:processed
-- KEYS[+3]  stat:processed:<id>
-- KEYS[+4]  job:<id>:status           of the finished job (any key when ARGV[+3] is "")
-- KEYS[+5]  failed
-- KEYS[+6]  attempts:<digest>         the job's attempts counter (any key when ARGV[+8] is "")
-- KEYS[+7]  attempts-index            zset: counter key -> expiry, Unix s
-- KEYS[+8]  stat:failed               (fail, retry, reschedule)
-- KEYS[+9]  stat:failed:<id>
-- KEYS[+10] queuestat:failed:<q>      queuestat:<host>:failed:<q>
-- KEYS[+11] retries                   (retry, reschedule)
-- KEYS[+12] stat:retries
-- KEYS[+13] queuestat:retries:<q>     queuestat:<host>:retries:<q>
-- KEYS[+14] source                    the list the job goes back to (queue:<q>)
-- KEYS[+15] queues
-- KEYS[+16] delayed:<ts>              when pushed through the delayed queue
-- KEYS[+17] timestamps:<item>
-- KEYS[+18] delayed_queue_schedule
-- KEYS[+19] job:<new-id>:status       of the retry
-- ARGV[+0]  worker-id
-- ARGV[+1]  seq                       claim sequence of the job (from claim.lua)
-- ARGV[+2]  outcome                   ok | fail | retry | reschedule | discard
-- ARGV[+3]  status                    of the finished job: "" none, or "v3:<status>" / "php:<code>"
-- ARGV[+4]  now                       Unix seconds
-- ARGV[+5]  entry                     for failed (fail) or retries (retry)
-- ARGV[+6]  class                     the job's (to recognise a false DirtyExit entry)
-- ARGV[+7]  queue                     its name (SADD queues; the DirtyExit entry's queue)
-- ARGV[+8]  attempts                  "" leave the counter, "0" delete it, N > 0 set it to N
-- ARGV[+9]  attempts-ttl              seconds (its index entry expires then too)
-- ARGV[+10] push                      what goes back (retry, reschedule): a queue
--                                     payload, or the delayed item when due > 0
-- ARGV[+11] due                       Unix seconds; 0 pushes to the queue at once
-- ARGV[+12] waiting                   "1" when the retry's status key gets "waiting" (resque-v3)
-- ARGV[+13] delayed-member            the timestamps index member, delayed:<ts> (no namespace)
--
-- The keys are those of the outcome: 8 for ok and discard, 11 for fail,
-- 20 for retry and reschedule; the arguments 10, or 14 for retry and
-- reschedule. Then come the effects that apply to this job, each a section
-- opened by its tag, in this order; one that does not apply sends nothing:
--   "q" a Resque queue the job goes back to joins queues (finish_push.lua)
--   "l" the release of a serial source's lock (effect_release.lua)
--   "u" the unique state (effect_unique.lua)
--   "w" the wake of a static pool's source (effect_wake.lua)
-- Their keys follow the outcome's in the same order.
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
-- The body is the function finish(KEYS, ARGV, ko, ao, batched, an) so
-- finish_claim.lua and finish_claim_batch.lua can reuse it: its keys and
-- arguments start after the first ko keys and ao arguments (none when run
-- alone), its last argument is ARGV[an] (#ARGV when run alone), and
-- batched leaves stat:processed to the caller (one INCRBY for the whole
-- batch).
-- finish_nkeys is how many keys each outcome has.
local finish_nkeys = {ok = 8, discard = 8, fail = 11, retry = 20, reschedule = 20}

-- finish_effects finds the sections of the effects (see the layout) after
-- the outcome's keys and arguments: whether the job joins queues, then
-- for the lock, the unique state and the wake the indexes in KEYS and
-- ARGV their section starts at (past its tag), or nil when not sent.
local function finish_effects(ARGV, ko, ao, an, outcome)
  local k, a = ko + (finish_nkeys[outcome] or 8), ao + 10
  if outcome == 'retry' or outcome == 'reschedule' then
    a = ao + 14
  end
  local joins, lk, la, uk, ua, wk, wa = false, nil, nil, nil, nil, nil, nil
  while a < an do
    local tag = ARGV[a + 1]
    if tag == 'q' then
      joins, a = true, a + 1
    elseif tag == 'l' then
      lk, la, k, a = k + 1, a + 2, k + 1, a + 2
    elseif tag == 'u' then
      uk, ua, k, a = k + 1, a + 2, k + 2, a + 3
    elseif tag == 'w' then
      wk, wa, k, a = k + 1, a + 2, k + 2, a + 2
    else
      return error('finish: no effect ' .. tostring(tag) .. ' (a caller of another version?)')
    end
  end
  return joins, lk, la, uk, ua, wk, wa
end

local function finish(KEYS, ARGV, ko, ao, batched, an)
  ko, ao = ko or 0, ao or 0
  local outcome = ARGV[ao + 3]
  local joins, lk, la, uk, ua, wk, wa = finish_effects(ARGV, ko, ao, an or #ARGV, outcome)
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
    if not pcall(finish_push, KEYS, ARGV, ko, ao, outcome, undo, joins, wk, wa) then
      for i = 1, #undo do
        rcall('RPOP', undo[i])
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
  if lk then
    release_lock(KEYS[lk], ARGV[la])
  end
  if uk then
    finish_unique(KEYS[uk], KEYS[uk + 1], outcome, ARGV, ao, KEYS[ko + 6], ARGV[ua], ARGV[ua + 1])
  end
  finish_status(KEYS, ARGV, ko, ao)
  return result
end

