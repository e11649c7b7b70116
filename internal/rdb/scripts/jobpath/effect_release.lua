-- jobpath/effect_release.lua: what a job that leaves its slot releases,
-- shared by the finish (finish.lua, effect_unique.lua), the hard stop's
-- requeue (requeue.lua) and the dead worker's recovery (prune.lua): the
-- serial queue's lock (docs/protocol.md#serial-queues) and the unique
-- state's running mark (docs/protocol.md#unique-jobs). A lock or unique
-- state of another type (a key written by hand) is nobody's: it is left
-- alone, and the job's other writes go on. Plain redis.call: requeue and
-- prune run without hot_globals.lua.
--
-- Layout, a section of the finish's effects (finish.lua), sent only for a
-- job from a serial source:
-- KEYS[+0] <ns>:queuedata:<q>:lock  the source's lock
-- ARGV[+0] tag                 "l"
-- ARGV[+1] token               the slot's lock token

-- held_string returns key's value when it holds a string, else ''.
local function held_string(key)
  local ok, v = pcall(redis.call, 'GET', key)
  if ok and type(v) == 'string' then
    return v
  end
  return ''
end

-- release_lock deletes a serial queue's lock while the slot still holds it
-- (its token): a lock that expired and was taken by another slot stays
-- that slot's.
local function release_lock(lock, token)
  if token ~= '' and held_string(lock) == token then
    redis.call('DEL', lock)
  end
end

-- unique_running reports whether a unique job's state (skey) says it is
-- running: only then does a finish, requeue or recovery move it on (a
-- state someone else set since, e.g. after `resque-go unique clear`, is
-- left alone).
local function unique_running(skey)
  return string.sub(held_string(skey), 1, 7) == 'running'
end
