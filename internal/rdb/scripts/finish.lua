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
local function finish_unique(skey, dkey, outcome, ARGV, ao, failed)
  local state = rcall('GET', skey)
  if not state or string.sub(state, 1, 7) ~= 'running' then
    return
  end
  if outcome == 'ok' then
    local deferred = rcall('GET', dkey)
    -- released first, then the deferred key goes: an error keeps it
    if deferred and release_deferred(skey, deferred, ARGV[ao + 18], ARGV[ao + 5], failed, ARGV[ao + 19], ARGV[ao + 1], ARGV[ao + 8]) then
      rcall('DEL', dkey)
    else
      rcall('DEL', skey, dkey)
    end
  elseif outcome == 'retry' or outcome == 'reschedule' then
    rcall('DEL', dkey)
    rcall('SET', skey, 'queued')
  else
    rcall('DEL', skey, dkey)
  end
end

-- finish_unmove takes back a move of the slot's claim sequence that was
-- not from the claim being finished (moved is where it went).
local function finish_unmove(seqs, wid, moved)
  if moved == 1 then
    rcall('HDEL', seqs, wid)
  else
    rcall('HINCRBY', seqs, wid, '-1')
  end
end

-- finish_move moves the slot's claim sequence on from seq and returns the
-- new one, or nil, nothing written, when seq is not the slot's claim any
-- more (the finish was applied before its reply was lost, or a recovery
-- took the claim). A short form's finish whose claim goes the short way
-- (claim_plain, claim_static) moves only the sequence and leaves the record
-- in place: the claim replaces it (SET ... XX), or removes it when it
-- finds no job, one command instead of two; when the record is gone (another
-- runtime's prune), that claim undoes what it did and the finish moves the
-- sequence back (finish_back) and returns 4, as finish_head does.
local function finish_move(seqs, wid, seq)
  local moved = rcall('HINCRBY', seqs, wid, '1')
  if moved ~= tonum(seq) + 1 then
    finish_unmove(seqs, wid, moved)
    return nil
  end
  return moved
end

-- finish_back moves a slot's sequence back after finish_move: its record
-- was found removed, so the finish writes nothing and returns 4.
local function finish_back(seqs, wid)
  rcall('HINCRBY', seqs, wid, '-1')
  return 4
end

-- finish_removed answers a finish whose slot's record worker:<id> was
-- found removed once its sequence moved on: another runtime's prune (see
-- Returns above): 2 or 3; or, for a short form (no class), 4 with the move
-- taken back. skip is 1 when the caller already pushed the job's own entry
-- to the end of failed (the search leaves it out).
local function finish_removed(seqs, failed, wid, class, queue, skip)
  if not class then
    return finish_back(seqs, wid)
  end
  -- Removed by another runtime's prune: Ruby recorded the job it read
  -- there as DirtyExit ("Job still being processed"). Remove that entry
  -- (the newest one for this worker id, job class and queue); the caller
  -- records the real outcome.
  local entries = rcall('LRANGE', failed, tostring(-100 - skip), tostring(-1 - skip))
  for i = #entries, 1, -1 do
    local ok, e = pcall(cjson.decode, entries[i])
    if ok and type(e) == 'table' and e['worker'] == wid and e['queue'] == queue
        and (e['exception'] == 'Resque::DirtyExit' or e['exception'] == 'Resque::PruneDeadWorkerDirtyExit')
        and type(e['payload']) == 'table' and e['payload']['class'] == class then
      rcall('LREM', failed, '-1', entries[i])
      return 2
    end
  end
  return 3
end

-- finish_head moves the slot's claim sequence on (only from seq: 0 when the
-- claim is not ours any more, nothing written) and clears its record
-- worker:<id> (wkey): 1 and the new sequence, or finish_removed's answer.
-- seqs is the claim-sequence hash, failed the failed list; class and queue
-- are the job's. A short form's finish (no class: finish_claim.lua,
-- finish_claim_batch.lua) that finds the record removed moves the sequence
-- back and returns 4, nothing written: the caller sends it again in full
-- form, which cleans up as above.
local function finish_head(seqs, wkey, failed, wid, seq, class, queue)
  local moved = finish_move(seqs, wid, seq)
  if not moved then
    return 0
  end
  if rcall('DEL', wkey) == 1 then
    return 1, moved
  end
  return finish_removed(seqs, failed, wid, class, queue, 0)
end

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
  if ARGV[ao + 9] == '0' then
    rcall('DEL', KEYS[ko + 7])
    rcall('ZREM', KEYS[ko + 8], KEYS[ko + 7])
  elseif ARGV[ao + 9] ~= '' then
    rcall('SET', KEYS[ko + 7], ARGV[ao + 9], 'EX', ARGV[ao + 10])
    -- the index tells idle claims whether any counter exists at all
    rcall('ZADD', KEYS[ko + 8], tonum(ARGV[ao + 5]) + tonum(ARGV[ao + 10]), KEYS[ko + 7])
  end
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
  local kind, value = nil, nil
  if ARGV[ao + 4] ~= '' then
    kind, value = string.match(ARGV[ao + 4], '^(%w+):(.+)$')
  end
  if kind == 'v3' then
    rcall('SET', KEYS[ko + 5], '{"status":"' .. value .. '","updated":' .. ARGV[ao + 5] .. '}', 'EX', '86400')
  elseif kind == 'php' then
    local cur = rcall('GET', KEYS[ko + 5])
    if cur then
      local ok, st = pcall(cjson.decode, cur)
      if ok and type(st) == 'table' and type(st['status']) == 'number' then
        st['status'] = tonum(value)
        st['updated'] = tonum(ARGV[ao + 5])
        if value == '3' or value == '4' then
          -- php-resque expires a finished job's status after a day
          rcall('SET', KEYS[ko + 5], cjson.encode(st), 'EX', '86400')
        else
          rcall('SET', KEYS[ko + 5], cjson.encode(st), 'KEEPTTL')
        end
      end
    end
  end
  return result
end

return finish(KEYS, ARGV)
