-- refresh_lock.lua: extend a serial queue's lock while its holder's job runs.
--
-- KEYS[1] queuedata:<q>:lock
-- ARGV[1] the holder's token
-- ARGV[2] time to live, milliseconds
--
-- Returns 1 when the token still held the lock (extended), 0 otherwise.
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0
