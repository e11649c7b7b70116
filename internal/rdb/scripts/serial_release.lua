-- serial_release.lua: release a serial queue's lock by hand, only while the
-- token that was read still holds it (a holder that refreshed, released or
-- lost it meanwhile is never robbed of a lock it took again).
--
-- KEYS[1] queuedata:<q>:lock
-- ARGV[1] the token read
--
-- Returns "released" (deleted), "other" (no lock, or another token holds
-- it: nothing done) or "wrongtype" (the key holds another type: nothing
-- done).
local t = redis.call('TYPE', KEYS[1]).ok
if t == 'none' then
  return 'other'
end
if t ~= 'string' then
  return 'wrongtype'
end
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return 'other'
end
redis.call('DEL', KEYS[1])
return 'released'
