-- unique_clear.lua: clear a uid's unique state (operator's `unique clear`,
-- or the sweep of a running state whose holder is gone), releasing a
-- parked deferred job rather than dropping it. Loaded after
-- unique_release.lua (release_deferred).
--
-- KEYS[1] unique:<uid>:state
-- KEYS[2] unique:<uid>:deferred
-- KEYS[3] failed (a deferred payload that cannot be released goes there)
-- ARGV[1] the namespace prefix "<ns>:"
-- ARGV[2] now, Unix seconds
-- ARGV[3] failed_at, for such an entry
-- ARGV[4] the state value the caller saw; "" clears whatever is there
-- ARGV[5] who clears (the failed entry's worker field)
--
-- Returns "changed" (the state is no longer ARGV[4]: nothing done),
-- "absent" (no state and no deferred job), "cleared" or "released" (the
-- deferred job was pushed to its queue, or filed in the delayed queue
-- after its deferrableBy, and the state is queued again; or, when it
-- cannot be released, recorded in failed and the state deleted). An error
-- (failed of another type, when the job goes there) leaves the state and
-- the deferred job as they were.
local state = redis.call('GET', KEYS[1])
if ARGV[4] ~= '' and state ~= ARGV[4] then
  return 'changed'
end
local deferred = redis.call('GET', KEYS[2])
if not state and not deferred then
  return 'absent'
end
if deferred then
  -- released first, then the deferred key goes: Redis keeps what a script
  -- wrote before an error, and an error must keep the job where it was
  if release_deferred(KEYS[1], deferred, ARGV[1], ARGV[2], KEYS[3], ARGV[3], ARGV[5], '') then
    redis.call('DEL', KEYS[2])
  else
    redis.call('DEL', KEYS[1], KEYS[2])
  end
  return 'released'
end
redis.call('DEL', KEYS[1])
return 'cleared'
