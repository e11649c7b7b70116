-- hot_globals.lua: the front of the per-job scripts and of their function
-- library (hot.go). In a function a global is looked up in the function's
-- own empty globals table first, then, through its metatable, in the real
-- one: two hash lookups, and a field of a global (redis.call, string.find)
-- a third. The per-job paths (claim.lua, finish.lua, finish_claim.lua,
-- finish_claim_batch.lua) call these through upvalues instead, set once at
-- the start of every call by hot_globals(): a library cannot keep them when
-- it is loaded, since Redis shows its code only redis.register_function and
-- redis.log then.
local rcall, sfind, sbyte, ssub, tonum

local function hot_globals()
  rcall, sfind, sbyte, ssub, tonum = redis.call, string.find, string.byte, string.sub, tonumber
end

-- sized returns an empty table with room for n values in its array part
-- (n nils laid out by the constructor): a table filled one value at a time
-- is rehashed at every power of two, which cost the batch script 2,500
-- Redis instructions a job at 8 slots (its reply and per-slot tables).
-- n stays far below what unpack can lay out (8,000): a batch has at most
-- 32 slots (batchMax in batch.go), 6 reply values each. Here, not in
-- finish.lua: claim.lua sizes its batch tables too (ring_memo).
local NONE = {}
local function sized(n)
  return {unpack(NONE, 1, n)}
end
