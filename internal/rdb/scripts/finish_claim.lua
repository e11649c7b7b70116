-- finish_claim.lua: finish.lua and claim.lua in one step, so a worker that
-- keeps busy needs one round trip per job. Loaded after the bodies of both
-- (their local functions finish and claim).
--
-- KEYS[1..nk]        finish.lua's keys
-- KEYS[nk+1..]       claim.lua's keys
-- ARGV[1..na]        finish.lua's arguments
-- ARGV[na+1..#ARGV-2] claim.lua's arguments
-- ARGV[#ARGV-1]      nk: how many keys are finish.lua's
-- ARGV[#ARGV]        na: how many arguments are finish.lua's
--
-- finish reads its own keys and arguments in place (the rest are beyond
-- what it looks at); claim is given where its own start. Nothing is copied:
-- splitting the lists into new tables cost Redis microseconds a job.
--
-- When the finish was recorded, the slot's record is gone and its sequence
-- has just moved on: the claim takes that sequence instead of reading the
-- record and moving the sequence again.
--
-- Returns {finish result, claim result}.
local nk, na = tonumber(ARGV[#ARGV - 1]), tonumber(ARGV[#ARGV])
local done = finish(KEYS, ARGV)
local seq = nil
if done > 0 then
  seq = tonumber(ARGV[2]) + 1
end
-- claim returns nil when every queue is empty: false keeps the table two long
return {done, claim(KEYS, ARGV, seq, nk, na) or false}
