-- ends.lua: what a job that leaves its slot without a finish settles, in
-- the step that takes it off its slot: the hard stop's requeue
-- (requeue.lua) and the dead worker's recovery (prune.lua). The same
-- functions the finish calls (jobpath/effect_limits.lua, effect_deps.lua,
-- effect_group.lua, effect_events.lua), so a job's end is applied the same
-- way whichever step makes it. Loaded after those modules and
-- hot_globals.lua (hot_globals() called first).
--
-- The sections follow the script's own keys and arguments, each opened by
-- its tag, in this order; one that does not apply sends nothing (a plain
-- job with these features off sends none):
--   "m" a cap's slot freed (effect_limits.lua's layout), one a cap held
--   "p" the job's end for the jobs that wait for it (effect_deps.lua's)
--   "g" the job's end counted in its group (effect_group.lua's)
--   "e" the event:
--       KEYS[+0] <ns>:resque-go:events
--       ARGV[+0] tag "e"
--       ARGV[+1] maxlen
--       ARGV[+2] max-age
--       ARGV[+3] job-id
--       ARGV[+4] attempt
--       ARGV[+5] class
--       ARGV[+6] queue
--       ARGV[+7] now       Unix seconds
--   the event is "failed" for a job that ends, "requeued" for one put back
--   (the caller cannot tell which before prune.lua's recovery count); an
--   event follows for each held job the end settled (released, failed,
--   discarded).
-- "p" and "g" are applied only when the job ends (ended true: recorded as
-- failed); a job put back has not ended.

-- ends_sizes are each section's keys and arguments, its tag's included.
local ends_sizes = {m = {2, 5}, p = {2, 6}, g = {2, 6}, e = {1, 8}}

-- ends_apply applies the sections from KEYS[k + 1] and ARGV[a + 1] on for
-- the job of worker wid: ended says it was recorded as failed.
local function ends_apply(KEYS, ARGV, k, a, wid, ended)
  -- rel: the held jobs a failed job's end settles (released, failed or
  -- dropped by their policy), for their events after its own; only a
  -- recorded end has them
  local rel
  if ended then
    rel = {}
  end
  while a < #ARGV do
    local tag = ARGV[a + 1]
    local size = ends_sizes[tag]
    if not size then
      return error('ends: no section ' .. tostring(tag) .. ' (a caller of another version?)')
    end
    local ki, ai = k + 1, a + 2
    if tag == 'm' then
      limits_release(KEYS[ki], KEYS[ki + 1], ARGV[ai], tonumber(ARGV[ai + 1]), ARGV[ai + 2], ARGV[ai + 3])
    elseif tag == 'e' then
      local event = 'requeued'
      if ended then
        event = 'failed'
      end
      events_add(KEYS[ki], ARGV[ai], ARGV[ai + 1], ARGV[ai + 6], 'event', event, 'id', ARGV[ai + 2],
        'class', ARGV[ai + 4], 'queue', ARGV[ai + 5], 'worker', wid, 'attempt', ARGV[ai + 3], 'duration_ms', '0')
      if rel then
        held_events(KEYS[ki], ARGV[ai], ARGV[ai + 1], ARGV[ai + 6], rel)
      end
    elseif ended then
      local ctx = {prefix = ARGV[ai + 1], failed_at = ARGV[ai + 2], qt = ARGV[ai + 3], ttl = ARGV[ai + 4], worker = wid,
        released = rel}
      if tag == 'p' then
        finish_deps(KEYS[ki], KEYS[ki + 1], ARGV[ai], 'fail', ctx)
      else
        finish_group(KEYS[ki], KEYS[ki + 1], ARGV[ai], 'fail', ctx)
      end
    end
    k, a = k + size[1], a + size[2]
  end
end
