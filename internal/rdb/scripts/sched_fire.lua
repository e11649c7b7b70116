-- sched_fire.lua: enqueue the job of one slot of a recurring schedule, at
-- most once per (schedule, slot) across any number of schedulers, and only
-- while the caller still holds the master lock.
--
-- KEYS[1] the master lock
-- KEYS[2] resque-go:schedule_slots (hash: name -> last slot, Unix seconds)
-- KEYS[3] delayed:last_enqueued_at (resque-scheduler's hash: name -> Time#to_s)
-- KEYS[4] queues
-- KEYS[5] queue:<q>
-- ARGV[1] the caller's lock value
-- ARGV[2] schedule name
-- ARGV[3] slot, Unix seconds
-- ARGV[4] payload
-- ARGV[5] queue name
-- ARGV[6] enqueue time as Ruby's Time#to_s
--
-- Returns {1, slot} when it enqueued the job; {0, last} when a slot at or
-- after ARGV[3] was already enqueued (last is the recorded slot); {-1, 0}
-- when the caller does not hold the master lock (nothing done).
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return {-1, 0}
end
local slot = tonumber(ARGV[3])
local last = tonumber(redis.call('HGET', KEYS[2], ARGV[2]) or '')
if last and last >= slot then
  return {0, last}
end
-- the push first: a queue of another type (a key written by hand) stops
-- the call before the slot counts as fired, so it fires once the key is
-- fixed
redis.call('RPUSH', KEYS[5], ARGV[4])
redis.call('HSET', KEYS[2], ARGV[2], ARGV[3])
redis.call('HSET', KEYS[3], ARGV[2], ARGV[6])
redis.call('SADD', KEYS[4], ARGV[5])
return {1, slot}
