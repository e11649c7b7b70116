-- jobpath/source_static_batch.lua: a static pool's ring as the claims of
-- one batch (finish_claim_batch.lua) share it: the ring's state in the
-- script's memory (ring_memo), one turn over it (ring_next), a turn taken
-- back (ring_unserve), and the write of the result once every claim ran
-- (ring_flush). See ring_static (source_static_ring.lua) for why.
-- Its slice of the claim's layout is source_static_ring.lua's.
-- ring_memo is the ring's state in a batch's memory (see ring_static),
-- made by the first claim of the batch that reaches the ring. settings,
-- when given, says whether any source has settings or is parked (the
-- caller asked Redis already).
local function ring_memo(ring, state, ARGV, d, memo, settings)
  local m = memo.rings[ring]
  if not m then
    -- one EXISTS says whether any source has settings or is parked:
    -- usually neither, and then no source's settings are read and no
    -- parked source is looked at (ring_static's first visit does that)
    local parked = ARGV[d + 5]
    if settings == nil then
      settings = rcall('EXISTS', ARGV[d + 6], parked) > 0
    end
    -- T and TF: NONE (never written) until the first read of a ring of
    -- several sources sizes them (ring_static; at most a source a claim).
    -- 15 fields, and a batch adds one (orig, or FP: a read's inline
    -- jobs; not both) unless some source has settings (pdone, parked) or
    -- a dry source is visited (D): a field past the table's size (16)
    -- rehashes it, 2,500 Redis instructions. plainjson: true until a read
    -- says otherwise; single: a ring of one source's names, or false
    m = {settings = settings, F = {}, fi = 1, T = NONE, TF = NONE, P = {}, n = memo.n, ns = memo.ns,
      fetched = 0, rempty = false, cycled = false, pre = ARGV[d + 1], state = state,
      single = false, plainjson = true}
    memo.rings[ring] = m
  end
  return m
end

-- ring_unserve undoes the last claim ring_static served from a ring in
-- memory m whose sources have no settings (a served source then only
-- moved from the ring's head to T, and its FIFO was popped): the payload
-- goes back to the head of the FIFO (an inline entry's job stays where it
-- was read, in FP) and the source back to the head.
local function ring_unserve(m, payload)
  local t, FP = #m.T, m.FP
  m.fi = m.fi - 1
  if not (FP and FP[m.fi]) then
    rcall('LPUSH', m.TF[t], payload)
  end
  m.T[t], m.TF[t] = nil, nil
end

-- ring_next visits source s, the next one read of a batch's ring in memory
-- m (see ring_static) of several sources none of which has settings: its
-- FIFO is popped and the source goes to the served ones (T); a dry one
-- leaves the ring (its mark; ring_flush trims it). It returns the payload,
-- or nil when the FIFO was dry. ring_static and claim_static's short way
-- both visit through it.
local function ring_next(m, s)
  local fifo, FP = m.pre .. s, m.FP
  local payload = FP and FP[m.fi]
  if not payload then
    payload = rpcall('LPOP', fifo)
    if payload and payload.err then
      -- its FIFO's key holds another type: off the ring as a dry one
      ring_bad, payload = true, nil
    end
  end
  m.fi = m.fi + 1
  if payload then
    local t = #m.T + 1
    m.T[t], m.TF[t] = s, fifo
  else
    ring_leave(m, m.state, s)
  end
  return payload
end

-- ring_flush writes back the rings a batch's claims rotated in memory (see
-- ring_static): the sources reached leave the ring's head, and the ring
-- ends with the sources not reached that it no longer holds (when the
-- claims went round it) and then those served; parked ones join the
-- parked list.
local function ring_flush(memo)
  for ring, m in pairs(memo.rings) do
    -- a ring no claim read, or of one source that served every claim,
    -- is left as it was: nothing to write
    if m.fetched > 0 and not (m.single and m.fi == 1) then
      local reached = m.fetched
      local push = {}
      if m.cycled then
        for i = m.fi, #m.F do
          push[#push + 1] = m.F[i]
        end
      else
        reached = m.fetched - (#m.F - m.fi + 1)
      end
      -- served sources whose FIFOs the batch emptied leave the ring now, as
      -- their next visit would (static_visit's drained): one EXISTS over
      -- their FIFOs says whether any job is left, and when none is, one HDEL
      -- takes them all off, two commands a job less for sources of one job;
      -- when some are left, an empty one is found at its next visit
      -- (their marks only: a source is served in T when its turn is over,
      -- and static_visit cleared its turn counter then). The same HDEL
      -- takes off the sources the claims left (ring_leave's, D)
      local T, D = m.T, m.D
      if #T > 0 and rcall('EXISTS', unpack(m.TF)) == 0 then
        local f = D or {}
        for i = 1, #T do
          f[#f + 1] = 'm:' .. T[i]
        end
        D, T = f, {}
      end
      if D then
        rcall('HDEL', m.state, unpack(D))
      end
      for _, s in ipairs(T) do
        push[#push + 1] = s
      end
      -- the ring after the trim and the push is its rest past the sources
      -- reached, then push; when the whole ring was read at once and that is
      -- the ring as it was (one source, or claims that went round it a whole
      -- number of times, none leaving it), nothing is written
      local o, same = m.orig, false
      if o and #m.P == 0 and #o - reached + #push == #o then
        same = true
        local rest = #o - reached
        for i = 1, #o do
          local v
          if i <= rest then
            v = o[reached + i]
          else
            v = push[i - rest]
          end
          if v ~= o[i] then
            same = false
            break
          end
        end
      end
      if not same then
        if reached > 0 then
          -- as a string when it is the batch's size, as sent (a number is
          -- formatted with a printf: 2,600 instructions)
          if reached == m.n and m.ns then
            reached = m.ns
          end
          rcall('LTRIM', ring, reached, '-1')
        end
        if #push > 0 then
          rcall('RPUSH', ring, unpack(push))
        end
      end
      if #m.P > 0 then
        local f = {}
        for i, s in ipairs(m.P) do
          f[2 * i - 1], f[2 * i] = 'm:' .. s, 'p'
        end
        rcall('RPUSH', m.parked, unpack(m.P))
        rcall('HSET', m.state, unpack(f))
      end
    end
  end
end

