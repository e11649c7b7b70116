-- requeue.lua: give a job a slot holds back to the head of its queue
-- (hard stop before the job finished).
--
-- KEYS[1] worker:<id>
-- KEYS[2] the job's source list (queue:<q>)
-- KEYS[3] resque-go claim-sequence hash (field: worker id)
-- KEYS[4] the source's serial lock (any key for a source that is not serial)
-- KEYS[5] unique:<uid>:state of a unique job (any key for another job)
-- ARGV[1] the raw payload
-- ARGV[2] worker id
-- ARGV[3] the slot's lock token for a serial source, "" otherwise
-- ARGV[4] "1" for a unique job: a running state goes back to queued
-- KEYS[6] static:ring:<pool> for a static pool source's FIFO (any key else)
-- KEYS[7] static:state:<pool> (any key else)
-- ARGV[5] that source's id, "" for any other source (jobpath/effect_wake.lua)
-- Then the sections of ends.lua that apply ("m" caps' slots freed, "e"
-- the requeued event): the job is put back, not ended, so its dependants
-- and group wait on.
--
-- The claim sequence moves on, so a finish of the same claim that arrives
-- later (the handler returned after all) is refused instead of being taken
-- for a record removed by another runtime (see jobpath/finish.lua).
--
-- Returns 1, or 0 when worker:<id> is gone (already finished or recovered).
if redis.call('EXISTS', KEYS[1]) == 0 then
  return 0
end
-- the static ring's wake and the push before the record goes: a source,
-- ring or state of another type (a key written by hand) stops the call
-- with the job still in worker:<id>, where recovery finds it (a source
-- woken before its push fails is taken off by the first claim that finds
-- its FIFO empty)
if ARGV[5] ~= '' then
  static_wake(KEYS[6], KEYS[7], ARGV[5])
end
redis.call('LPUSH', KEYS[2], ARGV[1])
redis.call('DEL', KEYS[1])
redis.call('HINCRBY', KEYS[3], ARGV[2], 1)
-- a lock or unique state of another type is nobody's: left alone
-- (jobpath/effect_release.lua)
release_lock(KEYS[4], ARGV[3])
if ARGV[4] == '1' and unique_running(KEYS[5]) then
  redis.call('SET', KEYS[5], 'queued')
end
hot_globals()
ends_apply(KEYS, ARGV, 7, 5, ARGV[2], false)
return 1
