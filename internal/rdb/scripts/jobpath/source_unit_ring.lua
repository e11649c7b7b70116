-- jobpath/source_unit_ring.lua: a claim's source that is a batch pool's
-- unit, a ring of batches (mass queues); a job's record names its batch's
-- list as its queue and its source.
--
-- Layout, the unit's description from its base d (the flag "r<d>",
-- source_ring.lua; Go: jobpath_source_unit_ring.go):
-- ARGV[+0] kind             "u"
-- ARGV[+1] lists_prefix     "<ns>:" (a batch's list is <ns>:<ARGV[+2]><batch id>)
-- ARGV[+2] lists_subprefix  "committed:"
-- ARGV[+3] holders_prefix   "<ns>:batch:holders:"
-- ARGV[+4] settings         the per-source settings hash, static:settings
--
-- A unit's ring is its batch ids (LPUSHed: the oldest at the tail): every
-- claim rotates it (LMOVE tail to head, as the released server's
-- BRPOPLPUSH) and takes the next job (RPOP: producers LPUSH, so the oldest
-- is at the tail) of the batch it lands on, skipping empty batches (the
-- allocator finishes them): batches of different sources interleave.
--
-- ring_unit serves a unit's ring of batches (see the header). A batch's
-- source (its id is <source>:<name>:<hex>) may have settings (static:settings,
-- read only when any source has some: one EXISTS, once per batch of
-- claims): a source with <s>:limit jobs of its batch running (its holders
-- hash, counted as for static sources) is passed over, and a source with
-- <s>:weight w > 1 keeps its batch for w claims in a row (the unit's turn
-- hash, field <batch id>, counts them).
local function ring_unit(ring, state, seqs, ARGV, d, memo)
  local ns, subp, holdp, settings = ARGV[d + 1], ARGV[d + 2], ARGV[d + 3], ARGV[d + 4]
  local any = nil
  if memo then
    any = memo.units[ring]
  end
  if any == nil then
    any = settings ~= '' and rcall('EXISTS', settings) == 1
    if memo then
      memo.units[ring] = any
    end
  end
  for _ = 1, rcall('LLEN', ring) do
    local b = rcall('LMOVE', ring, ring, 'RIGHT', 'LEFT')
    if not b then
      return nil
    end
    local w, capped = 1, false
    if any then
      local src = string.match(b, '^([^:]+):')
      if src then
        local c = rcall('HMGET', settings, src .. ':weight', src .. ':limit')
        w = tonum(c[1]) or 1
        local lim = tonum(c[2])
        capped = lim and lim > 0 and ring_held(holdp .. b, seqs) >= lim
      end
    end
    local payload = nil
    if not capped then
      payload = rcall('RPOP', ns .. subp .. b)
    end
    if payload then
      if w > 1 then
        if rcall('HINCRBY', state, b, '1') < w then
          -- back to the tail: the next claim takes this batch again
          rcall('LMOVE', ring, ring, 'LEFT', 'RIGHT')
        else
          rcall('HDEL', state, b)
        end
      end
      return payload, subp .. b, holdp .. b
    end
    if w > 1 then
      rcall('HDEL', state, b)
    end
  end
  return nil
end

