-- jobpath/source_static_ring.lua: a claim's source that is a static
-- pool's ring of sources (mass queues): one visit of a source
-- (static_visit) and the claim's turn over the ring (ring_static), alone
-- or as one of a batch's claims (its memory: source_static_batch.lua).
--
-- Layout, the pool's description from its base d (the flag "r<d>",
-- source_ring.lua; Go: jobpath_source_static_ring.go):
-- ARGV[+0] kind             "s"
-- ARGV[+1] lists_prefix     "<ns>:static:queue:<pool>:" (a source's FIFO is <ARGV[+1]><source>)
-- ARGV[+2] lists_subprefix  "static:queue:<pool>:", the FIFO's name in the record
-- ARGV[+3] holders_prefix   "<ns>:static:holders:<pool>:": <prefix><source> is the
--                           hash worker id -> claim sequence of the workers
--                           holding one of the source's jobs
-- ARGV[+4] record_queue     the record's queue as JSON ("static:queue:<pool>")
-- ARGV[+5] parked           the pool's parked list, static:parked:<pool>
-- ARGV[+6] settings         the per-source settings hash, static:settings
--
-- A static pool's ring is its sources with work (the allocator puts a
-- source on it when it queues the source's job; the state hash's field
-- m:<source> says "r" on the ring or "p" parked). An entry is the source's
-- id, or <source>:<payload> (inline: the allocator's for a source that
-- joins the ring with an empty FIFO, its job held in the entry and coming
-- before the FIFO's; a source id has no ':'). A claim serves the head:
-- LPOP from its FIFO, then rotates the ring once the source had <weight>
-- jobs in a row (settings <s>:weight, default 1; the state's t:<s> counts),
-- so sources take turns, weighted, at a cost that does not grow with their
-- number. A paused source (<s>:paused "1") leaves the ring; resuming puts
-- it back. A source with <s>:limit running jobs (counted in its holders
-- hash: an entry counts while the worker's claim sequence still equals it,
-- so a finish, requeue or dead-worker recovery frees the slot and no crash
-- can leak one) is parked; every claim looks at one parked source and puts
-- it back on the ring when a slot is free. A source whose FIFO is empty
-- leaves the ring at once; a job that comes back to its FIFO (a retry, a
-- requeue, a recovery) puts it back (jobpath/effect_wake.lua). The claim's worker
-- is recorded in the holders hash of the name served: a batch's always,
-- a static source's only while the source has a limit.
--
-- static_visit serves source s of a static pool (its FIFO's key: fifo),
-- just taken from the ring's head (see the header): its FIFO is popped
-- before its settings are read, so a source whose FIFO is empty costs no
-- settings read; a paused or capped source gets its job back at the head
-- of its FIFO. It returns 'serve', the payload, the holders hash to record
-- the claim in (nil for a source without a limit) and whether the source
-- keeps the ring's head (a weighted source whose turn goes on); or
-- 'paused', 'parked' or 'drained': the source leaves the ring (its state
-- is written here, the ring is the caller's).
local function static_visit(s, fifo, state, seqs, ARGV, d, m)
  local holdp, settings = ARGV[d + 3], ARGV[d + 6]
  local payload = rpcall('LPOP', fifo)
  if payload and payload.err then
    -- its FIFO's key holds another type: off the ring as a drained one
    ring_bad, payload = true, nil
  end
  if not payload then
    -- drained: off the ring at once; a job that comes back to its FIFO
    -- (a retry, a requeue, a recovery) puts it back (jobpath/effect_wake.lua).
    -- A turn counter (t:) exists only while some source has settings:
    -- SetWeight clears a source's when its weight changes
    ring_leave(m, state, s)
    return 'drained'
  end
  if not m.settings then
    -- no source has settings: weight 1, no limit, not paused
    return 'serve', payload, nil, false
  end
  local c = rcall('HMGET', settings, s .. ':weight', s .. ':limit', s .. ':paused')
  local lim = tonum(c[2])
  if c[3] == '1' then
    rcall('LPUSH', fifo, payload)
    ring_leave(m, state, s)
    return 'paused'
  end
  if lim and lim > 0 and ring_held(holdp .. s, seqs) >= lim then
    rcall('LPUSH', fifo, payload)
    -- a batch's parked sources are marked with its write of the ring
    -- (ring_flush), as ring_leave's
    if not m.state then
      rcall('HSET', state, 'm:' .. s, 'p')
    end
    rcall('HDEL', state, 't:' .. s)
    return 'parked'
  end
  local keep = false
  local w = tonum(c[1]) or 1
  if w > 1 then
    -- a weighted source keeps the head until its turn is over
    if rcall('HINCRBY', state, 't:' .. s, '1') < w then
      keep = true
    else
      rcall('HDEL', state, 't:' .. s)
    end
  end
  -- only a capped source's claims are counted (holders)
  local holders = nil
  if lim and lim > 0 then
    holders = holdp .. s
  end
  return 'serve', payload, holders, keep
end

-- ring_static serves a static pool's ring (see the header): it returns the
-- payload, its source's id (the caller builds the names: the list is
-- ARGV[d + 2] .. id), its holders hash and, for a batch, the ring's memory
-- m; or nil. Alone, each claim
-- rotates the ring in Redis (LMOVE head to tail) and serves the source
-- that moved. The claims of one batch (finish_claim_batch.lua, memo) share
-- what they can: the parked list is looked at by the first of them, whether
-- any source has settings is read once, and the ring is rotated in the
-- script's memory: its head is read once (as many sources as the batch has
-- claims, more only if those run out), the claims take turns over them
-- exactly as they would over the ring, and ring_flush writes the result
-- back (the sources reached are trimmed from the head, the served ones
-- pushed to the tail, in order): three commands for the batch instead of
-- one per claim, and none for the ring when the claims leave it as it was
-- (a ring of one source, or claims that went round it a whole number of
-- times). Until ring_flush the ring in Redis still holds every
-- source: a script stopped by an error loses none of them. A ring of one
-- source (m.single) takes a shorter way: a turn over it leaves it as it
-- was, so its claims change nothing of the ring's state in memory, and its
-- names (FIFO, list, the list as JSON and, in claim_static, the record's
-- head and tail) are built once for the batch, in m.single.
local function ring_static(ring, state, seqs, ARGV, d, memo)
  local subp, parked, settings = ARGV[d + 2], ARGV[d + 5], ARGV[d + 6]
  local m, p = nil, nil
  if memo then
    m = memo.rings[ring] or ring_memo(ring, state, ARGV, d, memo)
    if m.settings and not m.pdone then
      m.pdone = true
      p = rcall('LMOVE', parked, parked, 'LEFT', 'RIGHT')
    end
  else
    local any = rcall('EXISTS', settings, parked) > 0
    if any then
      p = rcall('LMOVE', parked, parked, 'LEFT', 'RIGHT')
    end
    m = {settings = any}
  end
  if p then
    local c = rcall('HMGET', settings, p .. ':limit', p .. ':paused')
    local lim = tonum(c[1])
    if c[2] == '1' then
      rcall('RPOP', parked)
      rcall('HDEL', state, 'm:' .. p)
    elseif not lim or lim <= 0 or ring_held(ARGV[d + 3] .. p, seqs) < lim then
      rcall('LMOVE', parked, ring, 'RIGHT', 'RIGHT')
      rcall('HSET', state, 'm:' .. p, 'r')
    end
  end
  -- every visit that serves nothing takes the source off the ring (drained,
  -- paused or parked), so the loop ends with a job or an empty ring
  if not memo then
    while true do
      local s = rcall('LMOVE', ring, ring, 'LEFT', 'RIGHT')
      if not s then
        return nil
      end
      local k = sfind(s, ':', 1, true)
      if k then
        -- an inline entry (see ring_static's batch read): its job goes to
        -- the head of its FIFO and the entry, now the ring's tail, becomes
        -- the source's name
        local name = ssub(s, 1, k - 1)
        rcall('LPUSH', ARGV[d + 1] .. name, ssub(s, k + 1))
        rcall('LSET', ring, '-1', name)
        s = name
      end
      local r, payload, holders, keep = static_visit(s, ARGV[d + 1] .. s, state, seqs, ARGV, d, m)
      if r == 'serve' then
        if keep then
          rcall('LMOVE', ring, ring, 'RIGHT', 'LEFT')
        end
        return payload, s, holders
      elseif r == 'parked' then
        rcall('LMOVE', ring, parked, 'RIGHT', 'RIGHT')
      else
        rcall('RPOP', ring)
      end
    end
  end
  -- the batch's ring in memory: F[fi..] are the sources read from the
  -- ring's head and not reached yet (fetched of them read in all), then
  -- what was not read, then T, the sources served (in order: the ring's
  -- tail); P are the sources to park
  while true do
    if m.fi > #m.F then
      local got = nil
      if not m.rempty then
        local want = m.n
        if m.fetched == 0 and m.ns then
          -- the first read takes one source more (indexes 0 to n, as
          -- strings: no number formatted)
          got, want = rcall('LRANGE', ring, '0', m.ns), m.n + 1
        else
          got = rcall('LRANGE', ring, m.fetched, m.fetched + m.n - 1)
        end
        -- nothing else changes the ring while the batch's claims run
        if #got < want then
          m.rempty = true
        end
        if #got == 0 then
          got = nil
        end
      end
      if got then
        -- inline entries (<source>:<payload>, the allocator's for a source
        -- that joined the ring with an empty FIFO): the name goes to F,
        -- the job to FP, at the same index
        local FP = nil
        for j = 1, #got do
          local e = got[j]
          local k = sfind(e, ':', 1, true)
          if k then
            if not FP then
              FP = sized(#got)
            end
            FP[j], got[j] = ssub(e, k + 1), ssub(e, 1, k - 1)
          end
        end
        m.FP = FP
        if m.fetched == 0 and m.rempty and not FP then
          if #got == 1 then
            -- a ring of one source: the batch's claims build its names
            -- once (its FIFO, its list, the list as JSON; claim_static
            -- adds the record's head and tail). ring_flush has nothing to
            -- compare: its claims leave it as it was or take it off
            local list = subp .. got[1]
            m.single = {fifo = m.pre .. got[1], list = list, lj = cjson.encode(list), head = false, tail = false}
          else
            -- the whole ring, read at once: ring_flush compares with it
            m.orig = got
          end
        end
        if not m.single and m.T == NONE then
          m.T, m.TF = sized(m.n), sized(m.n)
        end
        if not m.single and m.plainjson then
          -- whether JSON writes the names read and the lists' prefix as
          -- they are, between quotes: cjson escapes nothing in them when
          -- its text is just 2 bytes longer. claim_static then builds the
          -- record's "source" without a cjson.encode a job (1,200 Redis
          -- instructions; one encode of the batch's names costs 450 a job,
          -- a Lua pattern over them 1,900)
          local names = subp .. table.concat(got)
          m.plainjson = #cjson.encode(names) == #names + 2
        end
        m.F, m.fi, m.fetched = got, 1, m.fetched + #got
      elseif #m.T > 0 then
        -- every source was reached once: the served ones take turns again
        m.F, m.fi, m.T, m.TF, m.cycled, m.FP = m.T, 1, sized(m.n), sized(m.n), true, nil
      else
        return nil
      end
    end
    local s, single = m.F[m.fi], m.single
    if not single and not m.settings then
      -- several sources, none with settings: ring_next (static_visit's
      -- work without settings, and the served source's bookkeeping)
      local payload = ring_next(m, s)
      if payload then
        return payload, s, nil, m
      end
    else
      local fifo
      if single then
        fifo = single.fifo
      else
        fifo = m.pre .. s
        local FP = m.FP
        if FP and FP[m.fi] then
          -- an inline entry visited with settings (static_visit pops the
          -- FIFO, and a weighted source keeps the head): its job goes to
          -- the head of its FIFO and the entry in Redis (not written
          -- before ring_flush: its index is what was read before it)
          -- becomes the name, as a single claim does
          rcall('LPUSH', fifo, FP[m.fi])
          rcall('LSET', ring, m.fetched - #m.F + m.fi - 1, s)
          FP[m.fi] = nil
        end
      end
      local r, payload, holders, keep = static_visit(s, fifo, state, seqs, ARGV, d, m)
      if r == 'serve' then
        -- a turn over a ring of one source leaves it as it was: the state
        -- stays as read (its one source not reached yet)
        if not single and not keep then
          local t = #m.T + 1
          m.fi = m.fi + 1
          m.T[t], m.TF[t] = s, fifo
        end
        return payload, s, holders, m
      end
      m.fi = m.fi + 1
      if r == 'parked' then
        m.P[#m.P + 1] = s
        m.parked = parked
      end
    end
  end
end

