-- jobpath/effect_release.lua: the release of a serial queue's lock
-- (docs/protocol.md#serial-queues) by the slot that took it with its job
-- (claim.lua): only while the slot still holds it (its token), so a lock
-- that expired and was taken by another slot stays that slot's.
--
-- Layout, a section of the finish's effects (finish.lua), sent only for a
-- job from a serial source:
-- KEYS[+0] queuedata:<q>:lock  the source's lock
-- ARGV[+0] tag                 "l"
-- ARGV[+1] token               the slot's lock token
local function release_lock(lock, token)
  if rcall('GET', lock) == token then
    rcall('DEL', lock)
  end
end
