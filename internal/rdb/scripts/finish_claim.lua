-- finish_claim.lua: finish.lua and claim.lua in one step, so a worker that
-- keeps busy needs one round trip per job. Loaded after the bodies of both
-- (their local functions finish and claim).
--
-- KEYS[1..ARGV[1]]   finish.lua's keys
-- KEYS[ARGV[1]+1..]  claim.lua's keys
-- ARGV[1]            how many keys are finish.lua's
-- ARGV[2]            how many of the following arguments are finish.lua's
-- ARGV[3..]          finish.lua's arguments, then claim.lua's
--
-- When the finish was recorded, the slot's record is gone and its sequence
-- has just moved on: the claim takes that sequence instead of reading the
-- record and moving the sequence again.
--
-- Returns {finish result, claim result}.
local nk, na = tonumber(ARGV[1]), tonumber(ARGV[2])
local fk, ck, fa, ca = {}, {}, {}, {}
for i = 1, #KEYS do
  if i <= nk then fk[#fk + 1] = KEYS[i] else ck[#ck + 1] = KEYS[i] end
end
for i = 3, #ARGV do
  if i - 2 <= na then fa[#fa + 1] = ARGV[i] else ca[#ca + 1] = ARGV[i] end
end
local done = finish(fk, fa)
local seq = nil
if done > 0 then
  seq = tonumber(fa[2]) + 1
end
-- claim returns nil when every queue is empty: false keeps the table two long
return {done, claim(ck, ca, seq) or false}
