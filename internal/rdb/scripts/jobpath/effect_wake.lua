-- jobpath/effect_wake.lua: a job going back into a static pool source's
-- FIFO puts the source back on its pool's ring (static_wake.lua, which
-- the hard stop's requeue and the dead worker's recovery use; docs:
-- mass queues). Here for the finish's retry or reschedule pushed at once.
--
-- Layout, a section of the finish's effects (finish.lua), sent only for
-- such a push:
-- KEYS[+0] static:ring:<pool>   the pool's ring
-- KEYS[+1] static:state:<pool>  its state hash (field m:<source>)
-- ARGV[+0] tag                  "w"
-- ARGV[+1] source               the source's id
--
-- finish_wake is static_wake with the state field noted in undo before
-- the ring's push (finish_push's undo: a key of another type met later
-- takes the field back, so the source is not kept off the ring).
local function finish_wake(ring, state, source, undo)
  local field = 'm:' .. source
  if rcall('HSETNX', state, field, 'r') == 1 then
    undo.state, undo.field = state, field
    rcall('RPUSH', ring, source)
  end
end
