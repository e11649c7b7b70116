-- finish.lua: record the end of a job a worker slot ran.
--
-- KEYS[1] worker:<id>
-- KEYS[2] stat:processed
-- KEYS[3] stat:processed:<id>
-- KEYS[4] queuestat:<host>:processing_time:<q>
-- KEYS[5] queuestat:<host>:processed:<q>
-- KEYS[6] failed
-- KEYS[7] stat:failed
-- KEYS[8] stat:failed:<id>
-- KEYS[9] queuestat:<host>:failed:<q>
-- ARGV[1] outcome: "ok" or "fail"
-- ARGV[2] processing time in whole milliseconds
-- ARGV[3] the failed entry (outcome "fail")
--
-- Returns 1, or 0 when worker:<id> no longer exists: the job was recovered by
-- a pruner meanwhile (or an earlier attempt of this call already ran), so
-- nothing is written twice.
if redis.call('DEL', KEYS[1]) == 0 then
  return 0
end
redis.call('INCRBY', KEYS[2], 1)
redis.call('INCRBY', KEYS[3], 1)
redis.call('INCRBY', KEYS[4], tonumber(ARGV[2]))
if ARGV[1] == 'ok' then
  redis.call('INCRBY', KEYS[5], 1)
else
  redis.call('RPUSH', KEYS[6], ARGV[3])
  redis.call('INCRBY', KEYS[7], 1)
  redis.call('INCRBY', KEYS[8], 1)
  redis.call('INCRBY', KEYS[9], 1)
end
return 1
