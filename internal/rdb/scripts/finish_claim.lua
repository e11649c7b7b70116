-- finish_claim.lua: jobpath/finish.lua and jobpath/claim.lua in one step, so a worker that
-- keeps busy needs one round trip per job. Loaded after the bodies of both
-- (their local functions finish and claim).
--
-- KEYS[1..nk]        jobpath/finish.lua's keys
-- KEYS[nk+1..]       jobpath/claim.lua's keys
-- ARGV[1..na]        jobpath/finish.lua's arguments
-- ARGV[na+1..#ARGV-2] jobpath/claim.lua's arguments
-- ARGV[#ARGV-1]      nk: how many keys are jobpath/finish.lua's
-- ARGV[#ARGV]        na: how many arguments are jobpath/finish.lua's
--
-- finish reads its own keys and arguments in place (the rest are beyond
-- what it looks at); claim is given where its own start. Nothing is copied:
-- splitting the lists into new tables cost Redis microseconds a job.
--
-- When the finish was recorded, the slot's sequence has just moved on: the
-- claim takes that sequence instead of reading the record and moving the
-- sequence again. The full form's finish removes the slot's record; the
-- short and compact forms leave it for claim_plain to replace (SET ... XX)
-- or remove (no job, or paused), one command instead of two, and count the
-- job only then: a record found gone undoes the pop and the sequence's
-- move (finish_move, finish_back) and answers 4, as below.
--
-- A plain success (no status, attempts counter, serial lock or unique state
-- to write) comes in short form: 1 key (stat:processed) and 1 argument (the
-- claim sequence) instead of the full form's 5 to 13 and 7 to 9 and more
-- (jobpath/finish.lua); the slot's
-- worker:<id> and worker id are the claim's, and stat:processed:<id> is
-- built here (each string sent costs Redis about as much as a command's
-- overhead in a script). When another runtime removed the record while the
-- job ran, the short form writes nothing, claims nothing and returns 4: the
-- caller sends it again in full form, which has the job's class and queue
-- to clean up with (jobpath/finish.lua's finish_head). A claim from plain queues
-- only, with the sequence known, takes claim_plain.
--
-- The compact form, for a plain success whose claim is from plain queues
-- only (the common case of a lone slot): 16 strings for one queue instead
-- of the short form's 22, each costing Redis about 1,000 instructions,
-- all as arguments, no KEYS: Redis builds each of the two tables one
-- value at a time, rehashing at every power of two, so one table of 15
-- costs 3,500 instructions less a call than tables of 6 and 9 (measured).
-- In order:
--   stat:processed, pause-all-workers, worker:<id>, the claim sequences,
--   the attempts index, the n queues (the keys), then the claim sequence,
--   now, the status key prefix, the worker id, the attempts key prefix,
--   the n records' heads, their n tails, the unique key prefix, "c"
-- claim_plain reads these in place (no serial lock key, flag, token or
-- lock time). A finish that is not a plain one after all writes nothing
-- and claims nothing: it returns 5 when the sequence moved (the caller
-- sends the short form), 4 when another runtime removed the record (the
-- caller sends the full form, as for a short form).
--
-- A full form's finish that returns 6 (jobpath/finish.lua: a key the job goes to
-- has another type) writes and claims nothing either.
--
-- Returns six values, flat (Redis probes seven special fields of every
-- table it turns into a reply): the finish result, then the claim result
-- laid flat: -1 (paused), nil (no job) or its first element, then its other
-- elements (nil for those it lacks); and a seventh, only when the claim
-- skipped a source whose key holds another type: the skipped sources'
-- indexes (jobpath/claim.lua's wrongtype), the finish being recorded all the same.
if ARGV[#ARGV] == 'c' then
  -- compact form: a plain success and a claim from plain queues, without
  -- the arguments such a claim does not read; no KEYS, its keys are the
  -- first 5 + n arguments (A[k] below is the layout's KEYS[k], A[a + j]
  -- its ARGV[j])
  local A = ARGV
  local n = (#A - 12) / 3
  local a = 5 + n
  local wid = A[a + 4]
  -- finish_move inline (the call cost 870 instructions a job)
  local seq = rcall('HINCRBY', A[4], wid, '1')
  if seq ~= tonum(A[a + 1]) + 1 then
    finish_unmove(A[4], wid, seq)
    -- the sequence moved (a recovery): nothing was written; the caller
    -- sends the short form, which records that and still claims
    return {5, false, false, false, false, false}
  end
  local out = {1, false, false, false, false, false}
  -- as the short form's claim below, inline: a function shared by both
  -- cost a lone slot 1% more Redis instructions a job
  local counters, c = false, nil
  if rcall('EXISTS', A[2], A[5]) > 0 then
    local pause = rcall('GET', A[2])
    if pause and string.lower(string.match(pause, '^%s*(.-)%s*$')) == 'true' then
      out[2], c = -1, true
      if rcall('DEL', A[3]) == 0 then
        c = 'gone'
      end
    else
      counters = rcall('EXISTS', A[5]) == 1
    end
  end
  if c == nil then
    -- the finish left the record for the claim to replace or remove
    c = claim_plain(A, A, 1, a, n, A[3], seq, counters, out, 0, a + 6 + 2 * n, true)
  end
  if c == 'gone' then
    -- the record was removed by another runtime: as the short form
    finish_back(A[4], wid)
    return {4, false, false, false, false, false}
  end
  rcall('INCR', A[1])
  rcall('INCR', A[1] .. KEY_PROCESSED_SEP .. wid)
  if wrongtype then
    out[7] = wrongtype
  end
  return out
end
local nk, na = tonum(ARGV[#ARGV - 1]), tonum(ARGV[#ARGV])
local n = tonum(ARGV[na + 1])
-- a claim that writes events (n < 0) takes claim()'s way
local plain = n > 0
for i = 1, n do
  if ARGV[na + 5 + 2 * n + i] ~= '' then
    plain = false
  end
end
local done, seq, keep = 0, nil, false
if nk == 1 then
  local wid = ARGV[na + 4]
  if plain then
    -- the record stays for claim_plain to replace or remove
    seq = finish_move(KEYS[nk + 3], wid, ARGV[1])
    if seq then
      done, keep = 1, true
    end
  else
    done, seq = finish_head(KEYS[nk + 3], KEYS[nk + 2], nil, wid, ARGV[1])
    if done == 4 then
      return {4, false, false, false, false, false}
    end
    if done > 0 then
      rcall('INCR', KEYS[1])
      rcall('INCR', KEYS[1] .. KEY_PROCESSED_SEP .. wid)
    end
  end
else
  done = finish(KEYS, ARGV, 0, 0, false, na)
  if done == 6 then
    -- a key the job goes to has another type: nothing written or claimed
    return {6, false, false, false, false, false}
  end
end
if done > 0 and not seq then
  seq = tonum(ARGV[2]) + 1
end
local out = {done, false, false, false, false, false}
if plain and seq then
  -- usually neither the pause key nor any attempts counter exists
  local counters, c = false, nil
  if rcall('EXISTS', KEYS[nk + 1], KEYS[nk + 4]) > 0 then
    local pause = rcall('GET', KEYS[nk + 1])
    if pause and string.lower(string.match(pause, '^%s*(.-)%s*$')) == 'true' then
      out[2] = -1
      c = true
      if keep and rcall('DEL', KEYS[nk + 2]) == 0 then
        c = 'gone'
      end
    else
      counters = rcall('EXISTS', KEYS[nk + 4]) == 1
    end
  end
  if c == nil then
    c = claim_plain(KEYS, ARGV, nk, na, n, KEYS[nk + 2], seq, counters, out, 0, nil, keep)
  end
  if keep then
    local wid = ARGV[na + 4]
    if c == 'gone' then
      -- the record was removed by another runtime while the job ran
      finish_back(KEYS[nk + 3], wid)
      return {4, false, false, false, false, false}
    end
    rcall('INCR', KEYS[1])
    rcall('INCR', KEYS[1] .. KEY_PROCESSED_SEP .. wid)
  end
  if wrongtype then
    out[7] = wrongtype
  end
  return out
end
local c = claim(KEYS, ARGV, seq, nk, na) or false
if type(c) == 'table' then
  out[2], out[3], out[4], out[5], out[6] = c[1], c[2], c[3], c[4] or false, c[5] or false
else
  out[2] = c
end
if wrongtype then
  out[7] = wrongtype
end
return out
