-- jobpath/claim.lua: the core claim: atomically take the next job for one
-- worker slot. Sources: a plain queue and a serial queue (inline below: a
-- function call a job costs Redis more than their test), a static pool's
-- ring (source_static_ring.lua), a unit's ring (source_unit_ring.lua);
-- effects: effect_marks.lua (status, unique), effect_attempts.lua.
--
-- Layout (Go: jobpath_claim.go for its fixed part, jobs.go), from the
-- claim's base (KEYS[+k] is KEYS[ko+1+k], ARGV[+a] is ARGV[ao+1+a]), for
-- n sources:
-- KEYS[+0]         <ns>:pause-all-workers
-- KEYS[+1]         <ns>:worker:<id>
-- KEYS[+2]         <ns>:claim-sequences   resque-go's hash (field: worker id)
-- KEYS[+3]         <ns>:attempts-index    zset of the attempts counters that exist
-- KEYS[+4..+3+n]   the sources' lists (queue:<q_i>, or another list of
--                  payloads; a ring: source_ring.lua), in priority order
-- KEYS[+4+n..]     the second key of each source that has one, in the
--                  sources' order: a serial source's lock,
--                  queuedata:<q_i>:lock, a ring's state hash; none for a
--                  plain queue
-- ARGV[+0]         sources           n, how many sources
-- ARGV[+1]         now               Unix seconds
-- ARGV[+2]         status-prefix     job status key prefix, "<ns>:job:" (effect_marks.lua)
-- ARGV[+3]         worker-id
-- ARGV[+4]         attempts-prefix   "<ns>:resque-go:attempts:" (effect_attempts.lua)
-- ARGV[+5..+4+n]   the start of each source's worker record, up to its
--                  payload: {"queue":"<q>","run_at":"<time>","payload":
-- ARGV[+5+n..+4+2n] the end of each source's record: "}" for a queue
--                  (Ruby's record), or ,"source":"<list>"}
-- ARGV[+5+2n..+4+3n] "1" for a serial source, "" for a plain one, "r<d>"
--                  for a ring whose description starts at ARGV[d]
-- ARGV[+5+3n]      the slot's lock token (32 hex)
-- ARGV[+6+3n]      the lock's time to live, milliseconds
-- ARGV[+7+3n]      unique key prefix, "<ns>:unique:"
--                  (the caller builds the record around the payload: a
--                  concatenation of seven pieces here cost Redis ~7 us a job)
-- ARGV[+8+3n..]    the rings' descriptions, 7 arguments each (none without
--                  rings; source_ring.lua)
-- In the code below, KEYS[ko + 1] is KEYS[+0], ARGV[ao + 5 + i] is the
-- i-th source's ARGV[+4+i], and so on.
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
--
-- Serial sources (docs/protocol.md#serial-queues): a source whose lock another slot holds is
-- skipped (the next source is tried); a job popped from a serial source
-- takes the lock (SET PX, the slot's token) in the same step, and finish.lua
-- releases it. A source that is not serial costs no command.
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
  local n = tonum(ARGV[ao + 1])
  local token = ARGV[ao + 6 + 3 * n]
  if slot then
    token = slot.token
  end
  -- the sources' second keys, one for each serial source (its lock) and
  -- each ring (its state hash), in the sources' order; a plain queue has none
  local k2 = ko + 4 + n
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
      k2 = k2 + 1
      local holder = rcall('GET', KEYS[k2])
      if not holder or holder == token then
        payload = rpcall('LPOP', KEYS[ko + 4 + i])
        if payload and payload.err then
          payload = wrong_type(i)
        end
        if payload then
          rcall('SET', KEYS[k2], token, 'PX', ARGV[ao + 7 + 3 * n])
        end
      end
    else
      k2 = k2 + 1
      local memo = slot and slot.memo
      local d = memo and memo.flags and memo.flags[flag]
      if not d then
        d = ao + tonum(string.sub(flag, 2))
        if memo and memo.flags then
          memo.flags[flag] = d
        end
      end
      -- the record's queue: a static pool's, or a batch's list
      local q = nil
      if ARGV[d] == 's' then
        local s
        payload, s, holders = ring_static(KEYS[ko + 4 + i], KEYS[k2], KEYS[ko + 3], ARGV, d, memo)
        if ring_bad then
          ring_bad = false
          wrong_type(i)
        end
        if payload then
          list, q = ARGV[d + 2] .. s, ARGV[d + 4]
        end
      else
        payload, list, holders = ring_unit(KEYS[ko + 4 + i], KEYS[k2], KEYS[ko + 3], ARGV, d, memo)
      end
      if payload then
        lj = cjson.encode(list)
        head, tail = '{"queue":' .. (q or lj) .. head, ',"source":' .. lj .. '}'
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

