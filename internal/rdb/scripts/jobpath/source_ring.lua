-- jobpath/source_ring.lua: what the two ring sources of a claim (a
-- static pool's ring, source_static_ring.lua; a unit's ring of batches,
-- source_unit_ring.lua) share: their place in the claim's layout, the
-- count of a name's holders, and a source leaving a static ring.
--
-- Rings (mass queues, docs/protocol.md#mass-queues): a source can be a ring of lists
-- instead of one list. KEYS[4+i] is then the ring, a list of names, and
-- KEYS[4+n+i] the ring's state hash (a static pool's; a unit's turns);
-- ARGV[5+i] is the record's head after its queue (,"run_at":"<t>","payload":)
-- and ARGV[5+n+i] is unused. The ring's flag, ARGV[5+2n+i], is "r<d>":
-- its description starts at ARGV[d], after the claim's fixed arguments
-- (the rings' descriptions one after the other, each as long as its kind
-- needs: source_static_ring.lua's 7, source_unit_ring.lua's 5). Its first
-- argument is its kind, "s" (a static pool: names are source ids) or "u"
-- (a batch pool's unit: names are batch ids). The lists' and holders' keys
-- are built from the description's prefixes: which name is served is only
-- known here.
--
-- ring_held counts the current entries of a holders hash (worker id ->
-- claim sequence; current while seqs still has that sequence for the
-- worker) and removes the others. mass_route.lua's mass_held is the same.
local function ring_held(holders, seqs)
  local n = 0
  local h = rcall('HGETALL', holders)
  for j = 1, #h, 2 do
    if rcall('HGET', seqs, h[j]) == h[j + 1] then
      n = n + 1
    else
      rcall('HDEL', holders, h[j])
    end
  end
  return n
end

-- ring_bad says that a visit of this claim met a source whose FIFO's key
-- holds another type (written by hand): that source left the ring as a
-- drained one does, the claim went on to the next, and the claim's caller
-- names the ring as skipped (wrong_type) and clears it.
local ring_bad = false

-- ring_leave takes source s off a ring's membership: its mark (m:<s>) and,
-- while some source has settings, its turn counter (t:<s>) leave the state
-- hash at once for a single claim, which moves the ring in Redis in the
-- same step; for a batch's ring in memory (m.state) they wait for
-- ring_flush's write of the ring (m.D, made when first needed), so a
-- script stopped by an error before then leaves the source on the ring
-- with its mark, as it found it: the allocators and static_wake put a
-- source whose mark is missing on the ring, and one put there twice is
-- served twice a round.
local function ring_leave(m, state, s)
  if m.state then
    local D = m.D
    if not D then
      D = {}
      m.D = D
    end
    D[#D + 1] = 'm:' .. s
    if m.settings then
      D[#D + 1] = 't:' .. s
    end
  elseif m.settings then
    rcall('HDEL', state, 'm:' .. s, 't:' .. s)
  else
    rcall('HDEL', state, 'm:' .. s)
  end
end

