-- finish_claim_batch.lua: finish_claim.lua for several slots of one process
-- at once (slots that claim from the same sources), so a busy process pays
-- the fixed price of a script call, of the request and of the shared reads
-- once per batch instead of once per job. Loaded after the bodies of
-- jobpath/finish.lua and jobpath/claim.lua (their local functions finish and claim).
--
-- KEYS[1..nkc]       jobpath/claim.lua's keys for the first slot of the batch
--                    (its worker:<id> is not used: each slot's is below)
-- KEYS[nkc+1]        stat:processed
-- KEYS[nkc+2]        failed
-- KEYS[nkc+3..]      the finish keys of each slot in full form, one slot
--                    after the other: jobpath/finish.lua's (the first is the slot's
--                    worker:<id>)
-- ARGV[1..nac]       jobpath/claim.lua's arguments for the first slot (its worker
--                    id and lock token are not used)
-- ARGV[nac+1..]      each slot's finish, one after the other:
--                    - short form, for a plain success (no status, attempts
--                      counter, serial lock or unique state to write): the
--                      worker id and the claim sequence, then the slot's
--                      lock token only when a source is serial (a plain
--                      success writes nothing else: its worker:<id> and
--                      stat:processed:<id> are built here)
--                    - short form with caps, for a plain success whose job
--                      held caps' slots (docs/limits.md), only when the
--                      claim has the limits' description: the short form's
--                      arguments, then how many caps, then each cap's name
--                      and N (its keys are built from the description's
--                      limit prefix; effect_limits.lua's limits_release)
--                    - full form: how many keys and how many arguments
--                      jobpath/finish.lua has, its arguments (the first is the
--                      slot's worker id), then the slot's lock token
-- ARGV[#ARGV-3]      the slots' forms, one byte each: "s" short, "c" short
--                    with caps, "f" full
-- ARGV[#ARGV-2]      nkc
-- ARGV[#ARGV-1]      nac
-- ARGV[#ARGV]        m, the number of slots
--
-- Every finish runs first, in order, then every claim, in the same order:
-- each slot's finish still comes before its claim, and the claims see what
-- the finishes wrote (a retried job pushed back, an attempts counter set).
-- What all slots share is done once: stat:processed (one INCRBY), the
-- pause key and the attempts index (one EXISTS for both, usually); for a static
-- pool's ring, the parked list, whether any source has settings, and the
-- ring's rotation (ring_static, ring_flush). When the claims take a short
-- way (claim_plain, claim_static), a short form's finish moves only the
-- sequence and leaves the record for its slot's claim to replace or
-- remove (jobpath/finish_record.lua's finish_move), and the slot is counted
-- after its claim; stat:processed is written after every claim. A plain
-- success sends 2 strings instead of the full form's 12 (29 while it was
-- padded): each costs Redis about as much as a
-- command's overhead in a script (measured: 8% of the whole call at 8
-- slots). Its class and queue are needed only when another runtime removed
-- the slot's record while the job ran (finish_head): that finish returns 4,
-- writes nothing and claims nothing, and the caller sends that slot again in
-- full form. A full form's finish that returns 6 (jobpath/finish.lua: a key the
-- job goes to has another type) writes and claims nothing for its slot.
--
-- Returns six values per slot, one after the other: the finish result, then
-- the claim result of finish_claim.lua laid flat: -1 (paused), nil (no job)
-- or its first element, then its other elements (nil for those it lacks).
-- Then, only when a claim skipped a source whose key holds another type,
-- one more: the skipped sources' indexes (jobpath/claim.lua's wrongtype; the slots
-- share their sources).
local m = tonum(ARGV[#ARGV])
local nkc, nac = tonum(ARGV[#ARGV - 2]), tonum(ARGV[#ARGV - 1])
local kinds = ARGV[#ARGV - 3]
local ko, ao = nkc + 2, nac
local done, aos, tokens, seqs, wkeys, wids = sized(m), {}, {}, sized(m), sized(m), sized(m)
local processed = 0
local n = tonum(ARGV[1])
-- a short form carries a lock token only when a source is serial
local serial = false
-- claims from plain queues only (no serial source, no ring; limits may
-- count them) whose slot's finish gave the sequence take the short way,
-- claim_plain; a claim that writes events (n < 0: jobpath/claim.lua)
-- takes claim()'s way. ld: where the limits' description starts, when a
-- source is under limits (source_limits.lua)
local plain, ld = n > 0, nil
for i = 1, n do
  local f = ARGV[5 + 2 * n + i]
  if f == '1' then
    serial = true
  end
  if f ~= '' then
    if sbyte(f, 1) == 76 then
      ld = tonum(ssub(f, 2))
    else
      plain = false
    end
  end
end
-- what the limited claims of the batch share (limits_batch), and the
-- caps' slots its short forms free, by name, in order: one ZREM a cap
local lim, rel = ld and limits_batch(), ld and {}
-- and claims from one static pool's ring, claim_static (d: its description)
local static_d = nil
if n == 1 and sbyte(ARGV[8]) == 114 then -- "r<d>"
  static_d = tonum(string.sub(ARGV[8], 2))
  if ARGV[static_d] ~= 's' then
    static_d = nil
  end
end
-- the short form's keys: "<ns>:worker:" from the first slot's claim key
-- and worker id, "<ns>:stat:processed:" from stat:processed
local wp = string.sub(KEYS[2], 1, #KEYS[2] - #ARGV[4])
local pp = KEYS[nkc + 1] .. KEY_PROCESSED_SEP
-- a short form's finish leaves the record for a claim that goes the short
-- way (claim_plain, claim_static) to replace or remove
local keep = plain or static_d ~= nil
for j = 1, m do
  local kind = sbyte(kinds, j)
  if kind ~= 102 then -- "s" or "c"
    local wid = ARGV[ao + 1]
    local wkey = wp .. wid
    wkeys[j], wids[j] = wkey, wid
    if keep then
      -- the record stays for the short way's claim to replace or remove
      -- (finish_move); the counters wait for its answer
      -- (finish_move inline: the call cost 870 instructions a job)
      local moved = rcall('HINCRBY', KEYS[3], wid, '1')
      if moved == tonum(ARGV[ao + 2]) + 1 then
        done[j], seqs[j] = 1, moved
      else
        finish_unmove(KEYS[3], wid, moved)
        done[j] = 0
      end
    else
      done[j], seqs[j] = finish_head(KEYS[3], wkey, KEYS[nkc + 2], wid, ARGV[ao + 2])
      if done[j] == 1 then
        rcall('INCR', pp .. wid)
        processed = processed + 1
      end
    end
    if serial then
      tokens[j] = ARGV[ao + 3]
      ao = ao + 3
    else
      ao = ao + 2
    end
    if kind == 99 then -- "c": the caps' slots the job held
      -- how many: one digit read as a byte (tonumber is a strtod, 900
      -- instructions a job)
      local ks = ARGV[ao + 1]
      local k = #ks == 1 and sbyte(ks) - 48 or tonum(ks)
      if done[j] == 1 then
        -- the claim sequence: the form's second argument (a serial
        -- source's token after it)
        local member = wid .. ':' .. ARGV[serial and ao - 1 or ao]
        for h = ao + 2, ao + 2 * k, 2 do
          local r = rel[ARGV[h]]
          if not r then
            r = {cap = tonum(ARGV[h + 1])}
            rel[ARGV[h]], rel[#rel + 1] = r, ARGV[h]
          end
          r[#r + 1] = member
        end
      end
      ao = ao + 1 + 2 * k
    end
  else
    local nk, na = tonum(ARGV[ao + 1]), tonum(ARGV[ao + 2])
    ao = ao + 2
    aos[j], tokens[j] = ao, ARGV[ao + na + 1]
    wkeys[j], wids[j] = KEYS[ko + 1], ARGV[ao + 1]
    done[j] = finish(KEYS, ARGV, ko, ao, true, ao + na)
    ko, ao = ko + nk, ao + na + 1
    if done[j] > 0 and done[j] < 4 then
      processed = processed + 1
    end
  end
end
if rel then
  -- the slots freed, and as many parked jobs moved back as fit
  -- (effect_limits.lua's limits_release for several holds)
  for _, name in ipairs(rel) do
    local r, base = rel[name], ARGV[ld + 2] .. name
    local holders, parked = base .. KEY_LIMIT_HOLDERS_SUFFIX, base .. KEY_LIMIT_PARKED_SUFFIX
    -- a key of another type (written by hand) is set aside, named by
    -- set_aside_key: the batch's finishes are written already
    local z = rpcall('ZREM', holders, unpack(r))
    if type(z) == 'table' and z.err then
      limits_log(holders, z)
    elseif rcall('EXISTS', parked) == 1 then
      local ok, err = pcall(limits_refill, holders, parked, r.cap, ARGV[ld], ARGV[ld + 4], #r)
      if not ok then
        limits_log(parked, err)
      end
    end
  end
end
-- ns: m as sent, the first read of a ring's head (a number argument to
-- redis.call is formatted with a printf)
local out, memo = sized(6 * m), {rings = {}, units = {}, n = m, ns = ARGV[#ARGV], flags = {}}
-- usually neither the pause key nor any attempts counter exists, nor, for
-- a static pool, the per-source settings or the parked list: one EXISTS
-- says so (and ring_memo need not ask)
local paused, counters, any = false, false, 0
if static_d then
  local all = rcall('EXISTS', KEYS[1], KEYS[4], ARGV[static_d + 6], ARGV[static_d + 5])
  if all > 0 then
    any = rcall('EXISTS', KEYS[1], KEYS[4])
  end
  ring_memo(KEYS[5], KEYS[6], ARGV, static_d, memo, all > any)
else
  any = rcall('EXISTS', KEYS[1], KEYS[4])
end
if any > 0 then
  local pause = rcall('GET', KEYS[1])
  if pause and string.lower(string.match(pause, '^%s*(.-)%s*$')) == 'true' then
    paused = true
  end
  if not paused then
    counters = rcall('EXISTS', KEYS[4]) == 1
  end
end
-- one slot table for every claim (claim() keeps no reference to it)
local slot = {nk = nkc, counters = counters, memo = memo}
for j = 1, m do
  local o = 6 * (j - 1)
  local c = -1
  -- a short form's finish that moved the sequence (only a short form
  -- sets seqs[j]) left the record for the claim
  local kept = keep and seqs[j]
  if done[j] == 4 or done[j] == 6 then
    -- 6: a key the job goes to has another type (jobpath/finish.lua)
    c = false
  elseif paused then
    if kept and rcall('DEL', wkeys[j]) == 0 then
      c = 'gone'
    end
  else
    local seq = nil
    if done[j] > 0 then
      seq = seqs[j] or tonum(ARGV[aos[j] + 2]) + 1
    end
    if plain and seq then
      if lim then
        c = claim_plain_limited(KEYS, ARGV, 0, 0, n, wkeys[j], seq, counters, out, o, nil, kept, lim, wids[j])
      else
        c = claim_plain(KEYS, ARGV, 0, 0, n, wkeys[j], seq, counters, out, o, nil, kept)
      end
    elseif static_d and seq then
      c = claim_static(KEYS, ARGV, static_d, wkeys[j], wids[j], seq, counters, memo, out, o, kept)
    else
      if lim then
        -- claim() reads and writes the limits' keys itself
        limits_flush(lim, ARGV, ld)
      end
      slot.wkey, slot.wid, slot.token = wkeys[j], wids[j], tokens[j]
      c = claim(KEYS, ARGV, seq, 0, 0, slot) or false
    end
  end
  if kept then
    if c == 'gone' then
      -- another runtime removed the record while the job ran: nothing
      -- written, claimed or counted; the caller sends it in full form
      done[j] = finish_back(KEYS[3], wids[j])
      c = false
    else
      rcall('INCR', pp .. wids[j])
      processed = processed + 1
    end
  end
  -- flat: Redis looks for seven special fields in every table it turns
  -- into a reply, so two tables per slot cost more than the slot's claim
  out[o + 1] = done[j]
  if c == true then
    -- claim_plain wrote the slot's claim into out
  elseif type(c) == 'table' then
    out[o + 2], out[o + 3], out[o + 4], out[o + 5], out[o + 6] = c[1], c[2], c[3], c[4] or false, c[5] or false
  else
    out[o + 2], out[o + 3], out[o + 4], out[o + 5], out[o + 6] = c, false, false, false, false
  end
end
if processed == m then
  -- m as sent: a Lua number would be formatted with a printf
  rcall('INCRBY', KEYS[nkc + 1], ARGV[#ARGV])
elseif processed > 0 then
  rcall('INCRBY', KEYS[nkc + 1], processed)
end
ring_flush(memo)
if lim then
  limits_flush(lim, ARGV, ld)
end
if wrongtype then
  -- a source whose key holds another type was skipped (jobpath/claim.lua)
  out[6 * m + 1] = wrongtype
end
return out
