-- sched_master.lua: take, keep or give up resque-scheduler's master lock,
-- with the semantics of its Lock::Resilient (resque-scheduler 5.0.0,
-- lib/resque/scheduler/lock/resilient.rb): acquire is SETNX then EXPIRE
-- timeout; a holder whose value matches renews it with EXPIRE timeout;
-- release deletes it only for its holder. Ruby schedulers and resque-go
-- schedulers on one Redis therefore elect one master between them.
--
-- KEYS[1] the master lock (<ns>:<ns>:resque_scheduler_master_lock)
-- ARGV[1] this scheduler's value, "<hostname>:<pid>"
-- ARGV[2] the lock timeout, seconds (LOCK_TIMEOUT, default 180)
-- ARGV[3] "hold" to take or renew it, "release" to give it up
--
-- Returns 1 when the caller holds the lock afterwards (taken or renewed),
-- 0 when another scheduler holds it, or after a release.
if ARGV[3] == 'release' then
  if redis.call('GET', KEYS[1]) == ARGV[1] then
    redis.call('DEL', KEYS[1])
  end
  return 0
end
if redis.call('SETNX', KEYS[1], ARGV[1]) == 1 then
  redis.call('EXPIRE', KEYS[1], ARGV[2])
  return 1
end
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('EXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0
