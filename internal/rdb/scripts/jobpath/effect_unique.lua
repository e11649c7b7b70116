-- jobpath/effect_unique.lua: what a finish does to a unique job's state
-- (docs/protocol.md#unique-jobs); the claim's side is in effect_marks.lua,
-- the release of a deferred job in unique_release.lua.
--
-- Layout, a section of the finish's effects (finish.lua), sent only for a
-- unique job:
-- KEYS[+0] <ns>:unique:<uid>:state     the uid's state
-- KEYS[+1] <ns>:unique:<uid>:deferred  the job deferred behind it
-- ARGV[+0] tag                    "u"
-- ARGV[+1] prefix                 the namespace prefix "<ns>:" (a released
--                                 deferred job's keys are built from it:
--                                 its queue is only known here)
-- ARGV[+2] failed_at              for an entry recording a deferred payload
--                                 that cannot be released (no queue, not JSON)
--
-- Unique jobs, only while the uid's state is running (a state someone
-- else set since, e.g. after `resque-go unique clear`, is left alone):
--   ok          state and deferred deleted; a deferred payload is released
--               through the unique path: state queued, pushed to its queue,
--               or to the delayed queue at now + its deferrableBy
--   retry, reschedule
--               the deferred payload is dropped (as the PHP fork did) and
--               the state goes back to queued: the job's next copy is queued
--   fail, discard
--               state and deferred deleted (the PHP fork's removeAll)
local function finish_unique(skey, dkey, outcome, ARGV, ao, failed, prefix, failed_at)
  if not unique_running(skey) then
    return
  end
  if outcome == 'ok' then
    local deferred = rcall('GET', dkey)
    -- released first, then the deferred key goes: an error keeps it
    if deferred and release_deferred(skey, deferred, prefix, ARGV[ao + 4], failed, failed_at, ARGV[ao + 1], ARGV[ao + 7]) then
      rcall('DEL', dkey)
    else
      rcall('DEL', skey, dkey)
    end
  elseif outcome == 'retry' or outcome == 'reschedule' then
    rcall('DEL', dkey)
    rcall('SET', skey, 'queued')
  else
    rcall('DEL', skey, dkey)
  end
end

