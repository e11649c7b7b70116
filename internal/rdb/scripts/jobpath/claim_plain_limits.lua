-- jobpath/claim_plain_limits.lua: claim_plain.lua's plain claim for a
-- batch whose sources are plain queues, some under limits (flag "L<d>":
-- source_limits.lua; docs/limits.md). Its layout is claim.lua's. Loaded
-- after claim_plain.lua and the limits' modules; one of the optional
-- modules (hot.go's jobpathOptional), so the core library leaves it out.
--
-- claim_plain_limited is claim_plain with the limits: a limited source's
-- jobs are taken by limits_pop, and a job's caps joined as the slot wid's
-- hold; lim is the state the batch's claims share (limits_batch: the
-- batch writes it at its end). A function of its own rather than a branch
-- of claim_plain: the tests of that branch cost the unconfigured path 250
-- Redis instructions a job (BenchmarkScriptCost/resque-go/m=8 under
-- callgrind), where nothing configured must cost nothing.
local function claim_plain_limited(KEYS, ARGV, ko, ao, n, wkey, seq, counters, out, o, ui, keep, lim, wid)
  for i = 1, n do
    local payload, caps, ld
    local f = ARGV[ao + 5 + 2 * n + i]
    if f ~= '' then
      ld = lim[f]
      if not ld then
        ld = ao + tonum(ssub(f, 2))
        lim[f] = ld
      end
      payload, caps = limits_pop(KEYS[ko + 4 + i], ARGV, ld, lim)
    else
      payload = rpcall('LPOP', KEYS[ko + 4 + i])
    end
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
      if caps then
        -- seq is a number: '%d' formats it as an integer, where a
        -- concatenation formats a float ('%.14g': 1,700 instructions)
        limits_hold(caps, wid .. ':' .. lim.fmt('%d', seq), ARGV, ld, lim)
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

