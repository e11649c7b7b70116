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
local function iso8601(secs)
  local days = math.floor(secs / 86400)
  local rem = secs - days * 86400
  local z = days + 719468
  local era = math.floor(z / 146097)
  local doe = z - era * 146097
  local yoe = math.floor((doe - math.floor(doe / 1460) + math.floor(doe / 36524) - math.floor(doe / 146096)) / 365)
  local y = yoe + era * 400
  local doy = doe - (365 * yoe + math.floor(yoe / 4) - math.floor(yoe / 100))
  local mp = math.floor((5 * doy + 2) / 153)
  local d = doy - math.floor((153 * mp + 2) / 5) + 1
  local m = mp + 3
  if mp >= 10 then m = mp - 9 end
  if m <= 2 then y = y + 1 end
  return string.format('%04d-%02d-%02dT%02d:%02d:%02d+00:00', y, m, d,
    math.floor(rem / 3600), math.floor(rem / 60) % 60, rem % 60)
end
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
