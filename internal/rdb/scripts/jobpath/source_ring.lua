-- jobpath/source_ring.lua: what the two ring sources of a claim (a
-- static pool's ring, source_static_ring.lua; a unit's ring of batches,
-- source_unit_ring.lua) share: their description in the claim's layout,
-- the count of a name's holders, and a source leaving a static ring.
--
-- Rings (mass queues, docs/protocol.md#mass-queues): a source can be a ring of lists
-- instead of one list. KEYS[4+i] is then the ring, a list of names, and
-- KEYS[4+n+i] the ring's state hash (a static pool's; a unit's turns);
-- ARGV[5+i] is the record's head after its queue (,"run_at":"<t>","payload":)
-- and ARGV[5+n+i] is unused. The description, from ARGV[d]:
--   d    "s" (a static pool: names are source ids) or "u" (a batch pool's
--        unit: names are batch ids)
--   d+1  the lists' prefix with the namespace: "<ns>:static:queue:<pool>:"
--        (a name's list is <d+1><name>), or, for a unit, "<ns>:" (its list
--        is <ns>:<d+2><name>)
--   d+2  the lists' prefix without the namespace, "static:queue:<pool>:"
--        or "committed:"
--   d+3  the holders' prefix, "<ns>:static:holders:<pool>:" or
--        "<ns>:batch:holders:": <prefix><name> is the hash worker id ->
--        claim sequence of the workers holding one of the name's jobs
--   d+4  the record's queue as JSON ("static:queue:<pool>"), or "" for the
--        list's name without the namespace (committed:<batch_id>)
--   d+5  the pool's parked list, static:parked:<pool> ("" for a unit)
--   d+6  the per-source settings hash, static:settings
-- The lists' and holders' keys are built here: which name is served is
-- only known here.
--
-- Layout, from the ring's description's base d (ARGV[5+2n+i] says
-- "r<d>"; Go: jobpath_source_ring.go):
-- ARGV[+0] kind             "s" a static pool, "u" a unit
-- ARGV[+1] lists_prefix     the lists' prefix with the namespace
-- ARGV[+2] lists_subprefix  the lists' prefix without the namespace
-- ARGV[+3] holders_prefix   the holders' hashes' prefix
-- ARGV[+4] record_queue     the record's queue as JSON, "" for a unit
-- ARGV[+5] parked           the pool's parked list, "" for a unit
-- ARGV[+6] settings         the per-source settings hash
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

