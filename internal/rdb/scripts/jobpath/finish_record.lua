-- jobpath/finish_record.lua: the finish's hold on the claim: the slot's
-- claim sequence moved on (exactly once per claim) and its record
-- worker:<id> cleared, or a record found removed by another runtime.
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

