-- jobpath/claim_plain.lua: the plain claim, a fast path of claim.lua for
-- a slot whose sources are all plain queues (finish_claim.lua,
-- finish_claim_batch.lua). Its layout is claim.lua's.
--
-- claim_plain is claim() for a slot whose sources are all plain queues and
-- whose sequence is known (its finish moved it), used by finish_claim.lua
-- and finish_claim_batch.lua: the same pop, record, marks and attempts in
-- fewer steps. Its keys and arguments start after the first ko and ao;
-- counters says whether the attempts index is not empty; ui, when given,
-- is the index of the unique key prefix (finish_claim.lua's compact form
-- has no flags, token or lock time before it). keep says that the finish
-- left the slot's record in place (finish_move): the claim replaces it only
-- if it is still there, or removes it when no queue has a job; when it is
-- gone (another runtime's prune), the job popped goes back to the head of
-- its queue, nothing is written and the answer is 'gone'. It writes the
-- claim's result into out at o (flat: source index, payload, sequence,
-- attempts, false) and returns true, or false when no queue had a job.
local function claim_plain(KEYS, ARGV, ko, ao, n, wkey, seq, counters, out, o, ui, keep)
  for i = 1, n do
    local payload = rpcall('LPOP', KEYS[ko + 4 + i])
    if payload and payload.err then
      -- its key holds another type: skipped (wrong_type)
      payload = wrong_type(i)
    end
    if payload then
      local object = sbyte(payload, 1) == 123 and sbyte(payload, -1) == 125
      local record
      if object then
        record = ARGV[ao + 5 + i] .. payload .. ARGV[ao + 5 + n + i]
      else
        record = ARGV[ao + 5 + i] .. cjson.encode(payload) .. ARGV[ao + 5 + n + i]
      end
      if keep then
        if not rcall('SET', wkey, record, 'XX') then
          rcall('LPUSH', KEYS[ko + 4 + i], payload)
          return 'gone'
        end
      else
        rcall('SET', wkey, record)
      end
      if object then
        local u, d = sfind(payload, '"unique"', 1, true), sfind(payload, '"id"', 1, true)
        if u or d then
          job_marks(payload, u, d, ARGV, ao, ui or ao + 8 + 3 * n)
        end
      end
      local attempts = '0'
      if counters then
        attempts = job_attempts(payload, object, ARGV, ao)
      end
      out[o + 2], out[o + 3], out[o + 4], out[o + 5], out[o + 6] = i, payload, seq, attempts, false
      return true
    end
  end
  if keep and rcall('DEL', wkey) == 0 then
    return 'gone'
  end
  return false
end

