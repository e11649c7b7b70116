-- heartbeat.lua: the heartbeat of every slot of one process in one step, and
-- the re-registration of any slot another runtime unregistered (a Ruby or PHP
-- worker starting on the same host may remove ids whose pid it cannot see).
--
-- KEYS[1]      workers
-- KEYS[2]      workers:heartbeat
-- KEYS[3]      resque-go heartbeat-interval hash
-- KEYS[4]      resque-go attempts index (zset: counter key -> expiry)
-- KEYS[5..4+n] worker:<id_i>:started
-- ARGV[1]      started time (Ruby Time#to_s form), for slots registered again
-- ARGV[2]      heartbeat interval in seconds
-- ARGV[3..2+n] worker ids
--
-- An idle process costs 5 commands per interval this way (TIME, SMISMEMBER,
-- HSET, ZREMRANGEBYSCORE, ZCARD), whatever its slot count.
--
-- Returns the heartbeat written, from Redis TIME, as ISO 8601 UTC, the
-- number of slots registered again, and how many attempt counters exist
-- (expired index entries are dropped first): claims look for a job's
-- counter only while there are any.
-- (iso8601 comes from the iso8601.lua fragment loaded before this script.)
local now = redis.call('TIME')
local hb = iso8601(tonumber(now[1]))
local ids = {}
for i = 3, #ARGV do ids[#ids + 1] = ARGV[i] end
local member = redis.call('SMISMEMBER', KEYS[1], unpack(ids))
local fields = {}
local again = 0
for i, id in ipairs(ids) do
  fields[#fields + 1] = id
  fields[#fields + 1] = hb
  if member[i] == 0 then
    again = again + 1
    redis.call('SADD', KEYS[1], id)
    redis.call('SET', KEYS[4 + i], ARGV[1], 'NX')
    redis.call('HSET', KEYS[3], id, ARGV[2])
  end
end
redis.call('HSET', KEYS[2], unpack(fields))
redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', now[1])
return {hb, again, redis.call('ZCARD', KEYS[4])}
