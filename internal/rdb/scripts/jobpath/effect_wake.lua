-- jobpath/effect_wake.lua: a job going back into a static pool source's
-- FIFO puts the source back on its pool's ring (mass queues): the
-- finish's retry or reschedule pushed at once (finish_push.lua), the hard
-- stop's requeue (requeue.lua) and the dead worker's recovery (prune.lua).
--
-- Layout, a section of the finish's effects (finish.lua), sent only for
-- such a push:
-- KEYS[+0] <ns>:static:ring:<pool>   the pool's ring
-- KEYS[+1] <ns>:static:state:<pool>  its state hash (field m:<source>)
-- ARGV[+0] tag                  "w"
-- ARGV[+1] source               the source's id
--
-- static_wake(ring, state, source): a job went back into a static pool
-- source's FIFO (a retry at once, a hard stop's requeue, a dead worker's
-- recovery): put the source back on its pool's ring unless it is there or
-- parked (membership: field m:<source> of the pool's state hash). A claim
-- leaves a source's FIFO the moment it finds it empty, so without this the
-- job would wait for the source's next allocated job; a paused source put
-- back is taken off again by the first claim that meets it.
--
-- All or nothing: a ring of another type (a key written by hand) is found
-- before the state's field is set (HSETNX itself stops on a state of
-- another type), since a field set without the ring's entry would keep
-- the source off the ring for good. requeue.lua and prune.lua wake before
-- they push the job; finish_push.lua after, and takes its push back when
-- the wake stops it.
local function static_wake(ring, state, source)
  local t = redis.call('TYPE', ring)['ok']
  if t ~= 'list' and t ~= 'none' then
    return error(ring .. ' is a ' .. t .. ', not a list: the job is not put back')
  end
  if redis.call('HSETNX', state, 'm:' .. source, 'r') == 1 then
    redis.call('RPUSH', ring, source)
  end
end
