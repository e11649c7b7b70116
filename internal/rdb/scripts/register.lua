-- register.lua: register a worker slot, or re-assert its registration on
-- every heartbeat (a Ruby or PHP worker on the same host may have removed it).
--
-- KEYS[1] workers
-- KEYS[2] worker:<id>:started
-- KEYS[3] workers:heartbeat
-- KEYS[4] resque-go heartbeat-interval hash
-- KEYS[5] resque-go claim-sequence hash
-- ARGV[1] worker id
-- ARGV[2] started time (Ruby Time#to_s form)
-- ARGV[3] heartbeat interval in seconds
-- ARGV[4] "1" to overwrite :started (first registration), "0" to keep it
--
-- Returns the heartbeat written, from Redis TIME, as ISO 8601 UTC
-- (iso8601 comes from the iso8601.lua fragment loaded before this script).
local now = redis.call('TIME')
local hb = iso8601(tonumber(now[1]))
redis.call('SADD', KEYS[1], ARGV[1])
if ARGV[4] == '1' then
  redis.call('SET', KEYS[2], ARGV[2])
else
  redis.call('SET', KEYS[2], ARGV[2], 'NX')
end
redis.call('HSET', KEYS[3], ARGV[1], hb)
redis.call('HSET', KEYS[4], ARGV[1], ARGV[3])
-- One field whose value is longer than Redis's hash-max-listpack-value (64
-- bytes) keeps the claim-sequence hash a real hash table: in the compact
-- encoding every claim's and finish's HINCRBY scans the fields, a cost that
-- grows with the workers (up to 128, 5,800 Redis instructions a job at 32).
redis.call('HSETNX', KEYS[5], '~', 'a value longer than 64 bytes: this hash stays a hash table, O(1) per worker')
return hb
