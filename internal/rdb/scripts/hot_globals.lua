-- hot_globals.lua: the front of the per-job scripts and of their function
-- library (hot.go). In a function a global is looked up in the function's
-- own empty globals table first, then, through its metatable, in the real
-- one: two hash lookups, and a field of a global (redis.call, string.find)
-- a third. The per-job paths (jobpath/claim.lua, jobpath/finish.lua, finish_claim.lua,
-- finish_claim_batch.lua) call these through upvalues instead, set once at
-- the start of every call by hot_globals(): a library cannot keep them when
-- it is loaded, since Redis shows its code only redis.register_function and
-- redis.log then.
local rcall, sfind, sbyte, ssub, tonum, rpcall

-- wrongtype lists the sources (their indexes, 1-based, in the claim's
-- priority order) a claim of this call skipped because their list's key
-- holds another type (wrong_type); nil while none did. A function library
-- keeps it between calls: hot_globals() clears it.
local wrongtype

local function hot_globals()
  -- each global read here is a lookup through the globals' protection
  -- (about 150 ns): redis and string are read once
  local r, s = redis, string
  rcall, sfind, sbyte, ssub, tonum, rpcall = r.call, s.find, s.byte, s.sub, tonumber, r.pcall
  wrongtype = nil
end

-- wrong_type notes that source i was skipped because its list's key holds
-- another type (written by hand) and returns nil. A pop from a source's
-- list is a redis.pcall (which costs what redis.call does): on such a key
-- the LPOP fails before it takes anything, and its error reply (a table
-- with an err field; a payload is a string, whose .err is nil) sends the
-- claim on to the next source, so the sources after it are still served
-- and whatever the script wrote before the pop stands:
--   local payload = rpcall('LPOP', key)
--   if payload and payload.err then payload = wrong_type(i) end
-- inline, as here: a call a job would cost Redis more than the test.
local function wrong_type(i)
  local w = wrongtype
  if not w then
    wrongtype = {i}
    return nil
  end
  for j = 1, #w do
    if w[j] == i then
      return nil -- every slot of a batch meets it
    end
  end
  w[#w + 1] = i
  return nil
end

-- sized returns an empty table with room for n values in its array part
-- (n nils laid out by the constructor): a table filled one value at a time
-- is rehashed at every power of two, which cost the batch script 2,500
-- Redis instructions a job at 8 slots (its reply and per-slot tables).
-- n stays far below what unpack can lay out (8,000): a batch has at most
-- 32 slots (batchMax in batch.go), 6 reply values each. Here, not in
-- the finish's modules: the static ring's sizes its batch tables too
-- (ring_memo, jobpath/source_static_batch.lua).
local NONE = {}
local function sized(n)
  return {unpack(NONE, 1, n)}
end
