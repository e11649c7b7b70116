-- queue_clear.lua: delete a queue's jobs and say how many there were, in
-- one step (a push between a separate LLEN and DEL would go uncounted).
-- The queue stays in the queues set: it is emptied, not removed.
--
-- KEYS[1] the queue list
--
-- Returns the number of jobs deleted.
local n = redis.call('LLEN', KEYS[1])
redis.call('DEL', KEYS[1])
return n
