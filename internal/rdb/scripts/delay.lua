-- delay.lua: add an item to the delayed queue (resque-scheduler layout).
--
-- KEYS[1] delayed:<ts>
-- KEYS[2] timestamps:<item>
-- KEYS[3] delayed_queue_schedule
-- ARGV[1] the item
-- ARGV[2] ts, Unix seconds
-- ARGV[3] the index member, delayed:<ts> (no namespace)
--
-- Returns 1.
redis.call('RPUSH', KEYS[1], ARGV[1])
redis.call('SADD', KEYS[2], ARGV[3])
redis.call('ZADD', KEYS[3], ARGV[2], ARGV[2])
return 1
