-- claim.lua: atomically take the next job for one worker slot.
--
-- KEYS[1]        pause-all-workers
-- KEYS[2]        worker:<id>
-- KEYS[3]        resque-go claim-sequence hash (field: worker id)
-- KEYS[4]        resque-go attempts index (zset of the counters that exist)
-- KEYS[5..4+n]   the sources' lists (queue:<q_i>, or another list of
--                payloads), in priority order
-- KEYS[5+n..4+2n] each source's serial lock, queuedata:<q_i>:lock (any key
--                for a source that is not serial)
-- ARGV[1]        run_at (already formatted, ASCII; unused, kept for the layout)
-- ARGV[2]        now, Unix seconds
-- ARGV[3]        job status key prefix, "<ns>:job:" (see below)
-- ARGV[4]        worker id
-- ARGV[5]        attempt counter key prefix, "<ns>:resque-go:attempts:"
-- ARGV[6..5+n]   the start of each source's worker record, up to its
--                payload: {"queue":"<q>","run_at":"<time>","payload":
-- ARGV[6+n..5+2n] the end of each source's record: "}" for a queue (Ruby's
--                record), or ,"source":"<list>"}
-- ARGV[6+2n..5+3n] "1" for a serial source, "" for a plain one, "r<d>" for
--                a ring (see below) whose description starts at ARGV[d]
-- ARGV[6+3n]     the slot's lock token (32 hex)
-- ARGV[7+3n]     the lock's time to live, milliseconds
-- ARGV[8+3n]     unique key prefix, "<ns>:unique:"
--                (the caller builds the record around the payload: a
--                concatenation of seven pieces here cost Redis ~7 us a job)
-- ARGV[9+3n..]   the rings' descriptions, 7 arguments each (none without
--                rings)
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
-- A unit's ring is its batch ids (LPUSHed: the oldest at the tail): every
-- claim rotates it (LMOVE tail to head, as the released server's
-- BRPOPLPUSH) and takes the next job (RPOP: producers LPUSH, so the oldest
-- is at the tail) of the batch it lands on, skipping empty batches (the
-- allocator finishes them): batches of different sources interleave.
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
-- requeue, a recovery) puts it back (static_wake.lua). The claim's worker
-- is recorded in the holders hash of the name served: a batch's always,
-- a static source's only while the source has a limit.
--
-- Every claim gets a new claim sequence; finish.lua acts only on the claim
-- it was given, so a finish retried after a lost reply never touches a job
-- claimed since. The dequeue and queue-time counters (queuestat:*) are the
-- worker's to batch; nothing here decodes the payload unless it may name a
-- job status to update.
--
-- worker:<id> embeds the payload as is when it looks like a JSON object
-- (starts with "{", ends with "}"), else as a JSON string; the worker checks
-- the payload it got and rewrites the record in the rare case it was not
-- valid JSON after all, so resque-web always finds valid JSON there.
--
-- Job status (docs/protocol.md#job-status): a job with a top-level "id" gets its status set
-- to running here, in the same step as the claim. The key <prefix><id>:status
-- is built inside this script: the id is only known after the pop, and a
-- second round trip per job would be the price of passing it in.
--
-- Serial sources (docs/protocol.md#serial-queues): a source whose lock another slot holds is
-- skipped (the next source is tried); a job popped from a serial source
-- takes the lock (SET PX, the slot's token) in the same step, and finish.lua
-- releases it. A source that is not serial costs no command.
--
-- Unique jobs (docs/protocol.md#unique-jobs): a job whose payload has "unique":{"uid":U}
-- sets <prefix>U:state to running in the same step (built here, like the
-- status key: the uid is only known after the pop). Any other job costs one
-- string.find.
--
-- Attempts (protocol.AttemptsDigest): a job in Ruby's exact form
-- {"class","args"} keeps its count of failed attempts in the key
-- <prefix><sha1 of the payload>, since Ruby tools rebuild such jobs and drop
-- any count inside them; it is read here (built inside the script for the
-- same reason as the status key), so the worker knows the attempt number
-- without a second round trip. Only while the attempts index is not empty:
-- usually no job is being retried and the claim costs one EXISTS instead.
--
-- Returns:
--   -1                 every worker is paused (pause-all-workers is "true")
--   nil                no queue had a job
--   {0, record, seq}   worker:<id> already held a job (an earlier claim whose
--                      reply was lost): the record is returned and kept
--                      (seq, here and below, is a string or an integer:
--                      numbers are not formatted in Lua, which costs a
--                      printf per job)
--   {i, payload, seq, attempts}
--                      popped payload from source i (1-based); worker:<id>
--                      set; attempts is the counter's value: "0" when
--                      absent (or no counter exists at all), "" when not
--                      looked for (a job not in Ruby's compact form, while
--                      some counter exists: the worker reads it if the job
--                      is in Ruby's form written otherwise, with spaces or
--                      args first)
--   {i, payload, seq, attempts, list}
--                      the same from ring i, with the name of the list the
--                      job came from, without the namespace (the record's
--                      "source")
--   {i or false, payload or false, seq or false, attempts or false,
--    list or false, skipped}
--                      as above (false for what it lacks; all false: no
--                      job), when a source whose list's key holds another
--                      type (written by hand) was skipped: skipped are
--                      their indexes. Such a key fails the LPOP before it
--                      takes anything (redis.pcall: wrong_type in
--                      hot_globals.lua), and the sources after it are
--                      served as if it were empty.
--
-- The body is the function claim(KEYS, ARGV, seq, ko, ao, slot) so
-- finish_claim.lua and finish_claim_batch.lua can reuse it: its keys and
-- arguments start after the first ko keys and ao arguments (none when run
-- alone), and seq, when given, is the sequence finish.lua just moved to
-- (the slot's record is then known to be gone, and the claim takes that
-- number). slot, when given, claims for another slot with the same
-- sources: slot.nk is the claim's key count, slot.wkey its worker:<id>,
-- slot.wid its worker id, slot.token its lock token (replacing KEYS[2],
-- ARGV[4] and ARGV[6+3n]), slot.counters whether the attempts index is
-- not empty (the pause key is then the caller's to read), and slot.memo a
-- table the slots of one batch share (see ring_static).
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
  local payload = rcall('LPOP', fifo)
  if not payload then
    -- drained: off the ring at once; a job that comes back to its FIFO
    -- (a retry, a requeue, a recovery) puts it back (static_wake.lua).
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
    payload = rcall('LPOP', fifo)
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

-- ring_unit serves a unit's ring of batches (see the header). A batch's
-- source (its id is <source>:<name>:<hex>) may have settings (static:settings,
-- read only when any source has some: one EXISTS, once per batch of
-- claims): a source with <s>:limit jobs of its batch running (its holders
-- hash, counted as for static sources) is passed over, and a source with
-- <s>:weight w > 1 keeps its batch for w claims in a row (the unit's turn
-- hash, field <batch id>, counts them).
local function ring_unit(ring, state, seqs, ARGV, d, memo)
  local ns, subp, holdp, settings = ARGV[d + 1], ARGV[d + 2], ARGV[d + 3], ARGV[d + 6]
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

-- job_marks writes what a claimed job's payload asks for (u and d say
-- whether it mentions "unique" and "id"): a unique job's state becomes
-- running; a job with a status key gets its status set to running (see the
-- header). claim.lua's arguments start after ao (now at ao + 2, the status
-- key prefix at ao + 3); ui is the index of the unique key prefix.
local function job_marks(payload, u, d, ARGV, ao, ui)
  local decoded = nil
  if u then
    local ok, dec = pcall(cjson.decode, payload)
    if ok and type(dec) == 'table' then
      decoded = dec
      local un = dec['unique']
      local uid = type(un) == 'table' and un['uid']
      if type(uid) == 'number' then
        -- the literal text, as the worker reads it (tostring rounds)
        uid = string.match(payload, '"uid"%s*:%s*(-?[%d%.eE+-]+)')
      end
      if type(uid) == 'string' and uid ~= '' then
        rcall('SET', ARGV[ui] .. uid .. ':state', 'running')
      end
    end
  end
  if d then
    if not decoded then
      local ok, dec = pcall(cjson.decode, payload)
      decoded = ok and dec
    end
    local id = type(decoded) == 'table' and decoded['id']
    if type(id) == 'string' or type(id) == 'number' then
      local skey = ARGV[ao + 3] .. tostring(id) .. ':status'
      if decoded['isMonitored'] == true then
        -- resque-v3 string statuses
        rcall('SET', skey, '{"status":"running","updated":' .. ARGV[ao + 2] .. '}', 'EX', '86400')
      else
        -- php-resque integer statuses, only when the producer asked for tracking
        local cur = rcall('GET', skey)
        if cur then
          local sok, st = pcall(cjson.decode, cur)
          if sok and type(st) == 'table' and type(st['status']) == 'number' then
            st['status'] = 2
            st['updated'] = tonum(ARGV[ao + 2])
            rcall('SET', skey, cjson.encode(st), 'KEEPTTL')
          end
        end
      end
    end
  end
end

-- job_attempts reads a claimed job's attempts counter while some counter
-- exists (see Attempts in the header): its value, "0", or "" when not
-- looked for.
local function job_attempts(payload, object, ARGV, ao)
  if object and sfind(payload, '^{"class":"[^"]*","args":') then
    -- compact Ruby form: the counter is keyed by the payload's bytes
    return rcall('GET', ARGV[ao + 5] .. redis.sha1hex(payload)) or '0'
  end
  return '' -- not looked for: the worker reads it if it needs it
end

local function claim(KEYS, ARGV, seq, ko, ao, slot)
  ko, ao = ko or 0, ao or 0
  local nk, wkey, wid = #KEYS - ko, KEYS[ko + 2], ARGV[ao + 4]
  if slot then
    nk, wkey, wid = slot.nk, slot.wkey, slot.wid
  else
    local pause = rcall('GET', KEYS[ko + 1])
    if pause and string.lower(string.match(pause, '^%s*(.-)%s*$')) == 'true' then
      return -1
    end
  end
  if not seq then
    local held = rcall('GET', wkey)
    if held then
      local cur = rcall('HGET', KEYS[ko + 3], wid)
      if not cur then
        cur = rcall('HINCRBY', KEYS[ko + 3], wid, '1')
      end
      return {0, held, cur}
    end
  end
  local n = (nk - 4) / 2
  local token = ARGV[ao + 6 + 3 * n]
  if slot then
    token = slot.token
  end
  for i = 1, n do
    local flag = ARGV[ao + 5 + 2 * n + i]
    local payload, list, holders, lj = nil, nil, nil, nil
    local head, tail = ARGV[ao + 5 + i], ARGV[ao + 5 + n + i]
    if flag == '' then
      -- a queue whose key holds another type is skipped (wrong_type)
      payload = rpcall('LPOP', KEYS[ko + 4 + i])
      if payload and payload.err then
        payload = wrong_type(i)
      end
    elseif flag == '1' then
      local holder = rcall('GET', KEYS[ko + 4 + n + i])
      if not holder or holder == token then
        payload = rpcall('LPOP', KEYS[ko + 4 + i])
        if payload and payload.err then
          payload = wrong_type(i)
        end
        if payload then
          rcall('SET', KEYS[ko + 4 + n + i], token, 'PX', ARGV[ao + 7 + 3 * n])
        end
      end
    else
      local memo = slot and slot.memo
      local d = memo and memo.flags and memo.flags[flag]
      if not d then
        d = ao + tonum(string.sub(flag, 2))
        if memo and memo.flags then
          memo.flags[flag] = d
        end
      end
      if ARGV[d] == 's' then
        local s
        payload, s, holders = ring_static(KEYS[ko + 4 + i], KEYS[ko + 4 + n + i], KEYS[ko + 3], ARGV, d, memo)
        if payload then
          list = ARGV[d + 2] .. s
        end
      else
        payload, list, holders = ring_unit(KEYS[ko + 4 + i], KEYS[ko + 4 + n + i], KEYS[ko + 3], ARGV, d, memo)
      end
      if payload then
        lj = cjson.encode(list)
        local q = ARGV[d + 4]
        if q == '' then
          q = lj
        end
        head, tail = '{"queue":' .. q .. head, ',"source":' .. lj .. '}'
      end
    end
    if payload then
      local object = sbyte(payload, 1) == 123 and sbyte(payload, -1) == 125
      local embed = payload
      if not object then
        embed = cjson.encode(payload)
      end
      rcall('SET', wkey, head .. embed .. tail)
      if not seq then
        seq = rcall('HINCRBY', KEYS[ko + 3], wid, '1')
      end
      if holders then
        -- the cap's slot, freed when the sequence moves on; stale entries
        -- of a busy source are cleared now and then
        if rcall('HSET', holders, wid, seq) == 1 and tonum(seq) % 64 == 0 and rcall('HLEN', holders) > 64 then
          ring_held(holders, KEYS[ko + 3])
        end
      end
      if object then
        local u, d = sfind(payload, '"unique"', 1, true), sfind(payload, '"id"', 1, true)
        if u or d then
          job_marks(payload, u, d, ARGV, ao, ao + 8 + 3 * n)
        end
      end
      local attempts, counters = '0', nil
      if slot then
        counters = slot.counters
      else
        counters = rcall('EXISTS', KEYS[ko + 4]) == 1
      end
      if counters then
        attempts = job_attempts(payload, object, ARGV, ao)
      end
      if list then
        return {i, payload, seq, attempts, list}
      end
      return {i, payload, seq, attempts}
    end
  end
  return nil
end

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

-- claim_wrongtype adds to claim()'s result r the sources it skipped
-- because their key holds another type (wrongtype: called only when it is
-- set): a job's reply gets them as its sixth element (its fifth, the ring's
-- list, false when it has none), no job's reply is {false, false, false,
-- false, false, wrongtype}.
local function claim_wrongtype(r)
  if r == nil then
    return {false, false, false, false, false, wrongtype}
  end
  if type(r) == 'table' and r[1] ~= 0 then
    r[5], r[6] = r[5] or false, wrongtype
  end
  return r
end

return claim(KEYS, ARGV)
