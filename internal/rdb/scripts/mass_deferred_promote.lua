-- mass_deferred_promote.lua: move the released deferred mass jobs that are
-- due from resque-go:mass:deferred to unassigned (an allocator's pass), at
-- most ARGV[2] of them, oldest first, each in this one step.
--
-- KEYS[1] resque-go:mass:deferred (zset payload -> due, Unix seconds)
-- KEYS[2] unassigned
-- ARGV[1] now, Unix seconds
-- ARGV[2] how many at most
--
-- Returns how many moved.
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[2]))
for _, p in ipairs(due) do
  -- pushed before it leaves the zset: an unassigned of another type (a
  -- key written by hand) stops the call with the payload still deferred
  redis.call('LPUSH', KEYS[2], p)
  redis.call('ZREM', KEYS[1], p)
end
return #due
