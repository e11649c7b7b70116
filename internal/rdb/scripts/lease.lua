-- lease.lua: take or renew a lease held by one owner at a time.
--
-- KEYS[1] the lease key
-- ARGV[1] owner (a worker id)
-- ARGV[2] lease length, milliseconds
-- ARGV[3] "release" to give it up (only by its owner), else "take"
--
-- Returns 1 when the caller holds the lease afterwards (taken, renewed), 0
-- when another owner holds it (or after a release).
local cur = redis.call('GET', KEYS[1])
if ARGV[3] == 'release' then
  if cur == ARGV[1] then redis.call('DEL', KEYS[1]) end
  return 0
end
if cur == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
if cur then
  return 0
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1
