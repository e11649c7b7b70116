-- mass_unit_beat.lua: a unit of a batch pool is alive.
--
-- KEYS[1] pool:<pool>:heartbeats (zset unit -> last beat, Unix ms)
-- KEYS[2] pool:<pool>:unit_queues (zset unit list member -> batch count)
-- ARGV[1] unit id
-- ARGV[2] the unit's member, pool:<pool>:<unit>:queues (no namespace)
-- ARGV[3] now, Unix ms
--
-- A unit seen for the first time joins the load index with 0 batches (an
-- existing count is kept, as the released server's ZINCRBY 0 keeps it).
--
-- Returns 1.
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
redis.call('ZADD', KEYS[2], 'NX', 0, ARGV[2])
return 1
