-- sched_publish.lua: publish (or withdraw) the recurring schedules the
-- master scheduler fires, so that `resque-go schedule list` shows them
-- from any host, without the master's schedule file. Only the holder of
-- the master lock publishes; a withdrawal removes only what the caller
-- published.
--
-- KEYS[1] the master lock (<ns>:<ns>:resque_scheduler_master_lock)
-- KEYS[2] resque-go:schedules (hash: schedule name -> its config as JSON)
-- KEYS[3] resque-go:schedules_master (string: the lock value of the
--         scheduler that published KEYS[2])
-- ARGV[1] the caller's lock value, "<hostname>:<pid>"
-- ARGV[2] "publish" or "withdraw"
-- ARGV[3..] for "publish": name, config, name, config ...
--
-- Returns 1 when it published or withdrew, 0 when the caller is not the
-- master (publish) or did not publish what is there (withdraw).
if ARGV[2] == 'withdraw' then
  if redis.call('GET', KEYS[3]) ~= ARGV[1] then
    return 0
  end
  redis.call('DEL', KEYS[2], KEYS[3])
  return 1
end
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return 0
end
redis.call('DEL', KEYS[2])
for i = 3, #ARGV, 2 * 500 do
  local last = math.min(i + 2 * 500 - 1, #ARGV)
  redis.call('HSET', KEYS[2], unpack(ARGV, i, last))
end
redis.call('SET', KEYS[3], ARGV[1])
return 1
