-- unregister.lua: remove an idle worker slot's registration (clean exit).
--
-- KEYS[1] workers
-- KEYS[2] worker:<id>
-- KEYS[3] worker:<id>:started
-- KEYS[4] stat:processed:<id>
-- KEYS[5] stat:failed:<id>
-- KEYS[6] workers:heartbeat
-- KEYS[7] resque-go heartbeat-interval hash
-- KEYS[8] resque-go claim-sequence hash
-- ARGV[1] worker id
--
-- Returns 1, or 0 (nothing removed) when worker:<id> still holds a job:
-- the caller must finish or requeue it first, so the job is never orphaned.
if redis.call('EXISTS', KEYS[2]) == 1 then
  return 0
end
redis.call('SREM', KEYS[1], ARGV[1])
redis.call('DEL', KEYS[3], KEYS[4], KEYS[5])
redis.call('HDEL', KEYS[6], ARGV[1])
redis.call('HDEL', KEYS[7], ARGV[1])
redis.call('HDEL', KEYS[8], ARGV[1])
return 1
