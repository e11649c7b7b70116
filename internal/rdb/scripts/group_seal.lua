-- group_seal.lua: register a group's callback (or none) and seal the
-- group: from now on it fires once, when nothing of it is pending (at
-- once when nothing is). With jobpath/effect_deps.lua (docs/dependencies.md).
--
-- KEYS[1] <ns>:resque-go:group:<g>
-- KEYS[2] <ns>:resque-go:group:<g>:children
-- ARGV[1] group
-- ARGV[2] when        complete | success | '' (seal only: group close)
-- ARGV[3] class       the callback's
-- ARGV[4] queue
-- ARGV[5] args        JSON array
-- ARGV[6] id          the callback job's id
-- ARGV[7] prefix      "<ns>:"
-- ARGV[8] failed_at
-- ARGV[9] queue_time
-- ARGV[10] ttl
--
-- Returns 1 (sealed, pending), 2 (fired now), or the error reply "fired"
-- (the group had fired: nothing written).
local gk, g, when = KEYS[1], ARGV[1], ARGV[2]
if redis.call('HGET', gk, 'fired') then
  return redis.error_reply('fired')
end
if when ~= '' then
  redis.call('HSET', gk, when .. '_class', ARGV[3], when .. '_queue', ARGV[4], when .. '_args', ARGV[5], when .. '_id', ARGV[6])
end
redis.call('HSET', gk, 'sealed', '1')
redis.call('HSETNX', gk, 'total', '0')
redis.call('HSETNX', gk, 'pending', '0')
local ctx = {prefix = ARGV[7], failed_at = ARGV[8], qt = ARGV[9], ttl = ARGV[10], worker = 'resque-go group'}
local work = {}
deps_group_check(gk, KEYS[2], g, ctx, work)
if #work == 0 then
  return 1
end
deps_settle(work, ctx)
return 2
