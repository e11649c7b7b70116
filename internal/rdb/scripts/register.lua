-- register.lua: register a worker slot, or re-assert its registration on
-- every heartbeat (a Ruby or PHP worker on the same host may have removed it).
--
-- KEYS[1] workers
-- KEYS[2] worker:<id>:started
-- KEYS[3] workers:heartbeat
-- KEYS[4] resque-go heartbeat-interval hash
-- ARGV[1] worker id
-- ARGV[2] started time (Ruby Time#to_s form)
-- ARGV[3] heartbeat interval in seconds
-- ARGV[4] "1" to overwrite :started (first registration), "0" to keep it
--
-- Returns the heartbeat written, from Redis TIME, as ISO 8601 UTC.
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
redis.call('SADD', KEYS[1], ARGV[1])
if ARGV[4] == '1' then
  redis.call('SET', KEYS[2], ARGV[2])
else
  redis.call('SET', KEYS[2], ARGV[2], 'NX')
end
redis.call('HSET', KEYS[3], ARGV[1], hb)
redis.call('HSET', KEYS[4], ARGV[1], ARGV[3])
return hb
