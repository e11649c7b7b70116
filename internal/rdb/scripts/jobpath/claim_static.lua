-- jobpath/claim_static.lua: the static claim, a fast path of claim.lua for
-- the slots of a batch (finish_claim_batch.lua) whose one source is a
-- static pool's ring. Its layout is claim.lua's with one source.
--
-- claim_static is claim() for a slot whose one source is a static pool's
-- ring (claim.lua's ring_static, the batch's rotation in memory) and whose
-- sequence is known: the same record, marks, holders and attempts in
-- fewer steps, its result written into out at o (true), or false when the
-- ring had no job.
local function claim_static(KEYS, ARGV, d, wkey, wid, seq, counters, memo, out, o, keep)
  -- a ring of one source without settings (memo.fast, the ring's state in
  -- memory): a turn over it is a pop from its FIFO, which ring_static would
  -- do through two more calls; when the FIFO is empty, ring_static takes
  -- the source off the ring
  local m, payload, s, holders = memo.fast, nil, nil, nil
  if m then
    payload = rpcall('LPOP', m.single.fifo)
    if payload and payload.err then
      -- its FIFO's key holds another type: ring_static takes it off
      payload = nil
    end
    if not payload then
      memo.fast = nil
    end
  else
    -- a ring of several sources without settings (memo.turn): the next
    -- source read and not reached yet is visited here as ring_static
    -- would (ring_next), without its call and prologue; past what was
    -- read, and after a dry source, ring_static goes on
    m = memo.turn
    if m then
      s = m.F[m.fi]
      if s then
        payload = ring_next(m, s)
      end
    end
  end
  if not payload then
    if keep then
      -- the finish's record, left in place (claim_plain's keep), is
      -- replaced only if it is still there (SET XX), and a turn over a ring
      -- whose sources have no settings is undone when it is not
      -- (ring_unserve); with settings a turn may write more (a weighted
      -- turn, a cap's holders, the parked list), so the record is removed
      -- before the ring turns, as the full form does
      -- (made before the claims: see below)
      if memo.rings[KEYS[5]].settings then
        keep = false
        if rcall('DEL', wkey) == 0 then
          return 'gone'
        end
      end
    end
    payload, s, holders, m = ring_static(KEYS[5], KEYS[6], KEYS[3], ARGV, d, memo)
    if ring_bad then
      -- a source's FIFO of another type left the ring (the one source)
      ring_bad = false
      wrong_type(1)
    end
    if not payload then
      -- no job: the record kept goes, as claim_plain's
      if keep and rcall('DEL', wkey) == 0 then
        return 'gone'
      end
      return false
    end
    if not m.settings then
      if m.single then
        memo.fast = m
      else
        memo.turn = m
      end
    end
  end
  local object = sbyte(payload, 1) == 123 and sbyte(payload, -1) == 125
  local embed = payload
  if not object then
    embed = cjson.encode(payload)
  end
  local list
  local one = m.single
  if one then
    -- a ring of one source: the record's head and tail are built once
    -- (the record's queue, ARGV[d + 4], is the pool's: never '' here)
    if not one.head then
      one.head, one.tail = '{"queue":' .. ARGV[d + 4] .. ARGV[6], ',"source":' .. one.lj .. '}'
    end
    if keep then
      -- popped from the FIFO: a pop is undone by pushing the job back
      if not rcall('SET', wkey, one.head .. embed .. one.tail, 'XX') then
        rcall('LPUSH', one.fifo, payload)
        return 'gone'
      end
    else
      rcall('SET', wkey, one.head .. embed .. one.tail)
    end
    list = one.list
  else
    -- the record's "source" is the list's name as JSON: between quotes
    -- when the ring's names need no escape (m.plainjson, see ring_static)
    local record
    if m.plainjson then
      record = '{"queue":' .. ARGV[d + 4] .. ARGV[6] .. embed .. ',"source":"' .. ARGV[d + 2] .. s .. '"}'
    else
      record = '{"queue":' .. ARGV[d + 4] .. ARGV[6] .. embed .. ',"source":' .. cjson.encode(ARGV[d + 2] .. s) .. '}'
    end
    if keep then
      if not rcall('SET', wkey, record, 'XX') then
        ring_unserve(m, payload)
        return 'gone'
      end
    else
      rcall('SET', wkey, record)
    end
    -- the reply names the source alone, without the lists' prefix (a
    -- string a job less): a source id has no ':', a list's name has, and
    -- the caller adds the pool's prefix (rdb.parseClaim)
    list = s
  end
  if holders then
    -- as claim(): the cap's slot; stale entries cleared now and then
    if rcall('HSET', holders, wid, seq) == 1 and seq % 64 == 0 and rcall('HLEN', holders) > 64 then
      ring_held(holders, KEYS[3])
    end
  end
  if object then
    local u, dd = sfind(payload, '"unique"', 1, true), sfind(payload, '"id"', 1, true)
    if u or dd then
      job_marks(payload, u, dd, ARGV, 0, 11)
    end
  end
  local attempts = '0'
  if counters then
    attempts = job_attempts(payload, object, ARGV, 0)
  end
  out[o + 2], out[o + 3], out[o + 4], out[o + 5], out[o + 6] = 1, payload, seq, attempts, list
  return true
end

