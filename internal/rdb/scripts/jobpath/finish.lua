-- jobpath/finish.lua: the core finish: record the end of a job a worker slot ran, in one step.
--
-- The lists are as long as the outcome and the job's effects need, so the
-- common success path sends the fewest bytes. resque-go's per-host, per-queue
-- counters (queuestat:*) are not written here: the worker batches them
-- (rdb.Counters); Ruby's stat:processed counters are, job by job.
-- Layout (Go: jobpath_finish.go), from the finish's base (KEYS[+n] and
-- ARGV[+n] are KEYS[ko+1+n] and ARGV[ao+1+n]):
-- KEYS[+0]  <ns>:worker:<id>
-- KEYS[+1]  <ns>:claim-sequences           resque-go's hash (field: worker id)
-- KEYS[+2]  <ns>:stat:processed
-- KEYS[+3]  <ns>:stat:processed:<id>
-- KEYS[+4]  <ns>:failed
-- KEYS[+5]  <ns>:stat:failed               (fail, retry, reschedule)
-- KEYS[+6]  <ns>:stat:failed:<id>
-- KEYS[+7]  <ns>:queuestat:failed:<q>      queuestat:<host>:failed:<q>
-- KEYS[+8]  <ns>:retries                   (retry, reschedule)
-- KEYS[+9]  <ns>:stat:retries
-- KEYS[+10] <ns>:queuestat:retries:<q>     queuestat:<host>:retries:<q>
-- KEYS[+11] <ns>:source                    the list the job goes back to (queue:<q>)
-- KEYS[+12] <ns>:queues
-- ARGV[+0]  worker-id
-- ARGV[+1]  seq                       claim sequence of the job (from claim.lua)
-- ARGV[+2]  outcome                   ok | fail | retry | reschedule | discard
-- ARGV[+3]  now                       Unix seconds
-- ARGV[+4]  entry                     for failed (fail) or retries (retry)
-- ARGV[+5]  class                     the job's (to recognise a false DirtyExit entry)
-- ARGV[+6]  queue                     its name (SADD queues; the DirtyExit entry's queue)
-- ARGV[+7]  push                      what goes back (retry, reschedule): a queue
--                                     payload, or the delayed item when due > 0
-- ARGV[+8]  due                       Unix seconds; 0 pushes to the queue at once
--
-- The keys are those of the outcome: 5 for ok and discard, 8 for fail, 13
-- for retry and reschedule; the arguments 7, or 9 for retry and
-- reschedule. Then come the effects that apply to this job, each a section
-- opened by its tag, in this order; one that does not apply sends nothing:
--   "q" a Resque queue the job goes back to joins queues (finish_push.lua)
--   "d" the push through the delayed queue (finish_delayed.lua)
--   "s" the finished job's status (effect_status.lua)
--   "a" its attempts counter (effect_attempts.lua)
--   "n" the retry's status, waiting (effect_waiting.lua)
--   "l" the release of a serial source's lock (effect_release.lua)
--   "u" the unique state (effect_unique.lua)
--   "w" the wake of a static pool's source (effect_wake.lua)
--   "m" a cap's slot freed (effect_limits.lua), one section a cap held
--   "p" the job's outcome for the jobs that wait for it (effect_deps.lua)
--   "g" the job's end counted in its group (effect_group.lua)
--   "t" the job's tags' indexes (effect_tags.lua; one key a tag)
--   "e" the end of the attempt in the events stream (effect_events.lua),
--       then an event for each held job that end settled ("p", "g":
--       released, or failed or discarded by their policy)
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
local finish_nkeys = {ok = 5, discard = 5, fail = 8, retry = 13, reschedule = 13}

-- finish_sections says, for each effect's tag, how many keys and
-- arguments (its tag's included) its section has.
-- (The tags' section, "t", has one key a tag: finish_effects reads its size.)
local finish_sections = {q = {0, 1}, d = {3, 2}, s = {1, 2}, a = {2, 3}, n = {1, 1}, l = {1, 2}, u = {2, 3}, w = {2, 2}, m = {2, 5}, p = {2, 6}, g = {2, 6}, e = {1, 7}}

-- finish_effects finds the sections of the effects (see the layout) after
-- the outcome's keys and arguments: for each tag sent, the indexes in KEYS
-- and ARGV its section starts at (past its tag), fx[tag] = {k, a}.
local function finish_effects(ARGV, ko, ao, an, outcome)
  local k, a = ko + (finish_nkeys[outcome] or 5), ao + 7
  if outcome == 'retry' or outcome == 'reschedule' then
    a = ao + 9
  end
  local fx = {}
  while a < an do
    local tag = ARGV[a + 1]
    local size = finish_sections[tag]
    if not size and tag == 't' then
      size = {tonum(ARGV[a + 2]), 3} -- one key a tag
    end
    if not size then
      return error('finish: no effect ' .. tostring(tag) .. ' (a caller of another version?)')
    end
    if tag == 'm' then
      -- a job holds a slot of each cap that counts it: a section each
      local m = fx.m or {}
      m[#m + 1], fx.m = {k + 1, a + 2}, m
    else
      fx[tag] = {k + 1, a + 2}
    end
    k, a = k + size[1], a + size[2]
  end
  return fx
end

local function finish(KEYS, ARGV, ko, ao, batched, an)
  ko, ao = ko or 0, ao or 0
  local outcome = ARGV[ao + 3]
  local fx = finish_effects(ARGV, ko, ao, an or #ARGV, outcome)
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
    if not pcall(finish_push, KEYS, ARGV, ko, ao, outcome, undo, fx) then
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
      result = finish_removed(seqs, KEYS[ko + 5], wid, ARGV[ao + 6], ARGV[ao + 7], skip)
    end
  else
    result = finish_head(KEYS[ko + 2], KEYS[ko + 1], KEYS[ko + 5], ARGV[ao + 1], ARGV[ao + 2], ARGV[ao + 6], ARGV[ao + 7])
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
    rcall('INCR', KEYS[ko + 6])
    rcall('INCR', KEYS[ko + 7])
    rcall('INCR', KEYS[ko + 8])
  elseif outcome == 'retry' then
    rcall('INCR', KEYS[ko + 10])
    rcall('INCR', KEYS[ko + 11])
  end
  local now, e = ARGV[ao + 4], fx.a
  if e then
    finish_attempts(KEYS[e[1]], KEYS[e[1] + 1], ARGV[e[2]], ARGV[e[2] + 1], now)
  end
  e = fx.n
  if e then
    finish_waiting(KEYS[e[1]], now)
  end
  e = fx.l
  if e then
    release_lock(KEYS[e[1]], ARGV[e[2]])
  end
  e = fx.u
  if e then
    finish_unique(KEYS[e[1]], KEYS[e[1] + 1], outcome, ARGV, ao, KEYS[ko + 5], ARGV[e[2]], ARGV[e[2] + 1])
  end
  e = fx.s
  if e then
    finish_status(KEYS[e[1]], ARGV[e[2]], now)
  end
  e = fx.m
  if e then
    for i = 1, #e do
      local k, a = e[i][1], e[i][2]
      limits_release(KEYS[k], KEYS[k + 1], ARGV[a], tonum(ARGV[a + 1]), ARGV[a + 2], ARGV[a + 3])
    end
  end
  -- rel: the held jobs the end settles, for their events (only when the
  -- job's end settles some and events are on)
  local rel
  e = fx.p
  if e then
    local a = e[2]
    if fx.e then
      rel = {}
    end
    finish_deps(KEYS[e[1]], KEYS[e[1] + 1], ARGV[a], outcome,
      {prefix = ARGV[a + 1], failed_at = ARGV[a + 2], qt = ARGV[a + 3], ttl = ARGV[a + 4], worker = ARGV[ao + 1], released = rel})
  end
  e = fx.g
  if e then
    local a = e[2]
    if fx.e and not rel then
      rel = {}
    end
    finish_group(KEYS[e[1]], KEYS[e[1] + 1], ARGV[a], outcome,
      {prefix = ARGV[a + 1], failed_at = ARGV[a + 2], qt = ARGV[a + 3], ttl = ARGV[a + 4], worker = ARGV[ao + 1], released = rel})
  end
  e = fx.t
  if e then
    finish_tags(KEYS, ARGV, e[1], e[2])
  end
  e = fx.e
  if e then
    finish_event(KEYS, ARGV, e, ko, ao, rel)
  end
  return result
end
