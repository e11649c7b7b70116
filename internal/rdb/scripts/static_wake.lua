-- static_wake(ring, state, source): a job went back into a static pool
-- source's FIFO (a retry at once, a hard stop's requeue, a dead worker's
-- recovery): put the source back on its pool's ring unless it is there or
-- parked (membership: field m:<source> of the pool's state hash). A claim
-- leaves a source's FIFO the moment it finds it empty, so without this the
-- job would wait for the source's next allocated job; a paused source put
-- back is taken off again by the first claim that meets it.
local function static_wake(ring, state, source)
  if redis.call('HSETNX', state, 'm:' .. source, 'r') == 1 then
    redis.call('RPUSH', ring, source)
  end
end
