-- jobpath/effect_group.lua: a job of a group (its payload's "group") counted
-- at its end, in the same step as its finish; the group's callbacks fired
-- once when the last of its jobs ends (effect_deps.lua's deps_group_check).
--
-- Layout, a section of the finish's effects (finish.lua), sent only for a
-- job of a group that ends (ok, fail, discard): a retry is no end, so a
-- job retried counts once, at its last attempt:
-- KEYS[+0] <ns>:resque-go:group:<g>           the group's counters and callbacks
-- KEYS[+1] <ns>:resque-go:group:<g>:children  the held jobs waiting for the group
-- ARGV[+0] tag                  "g"
-- ARGV[+1] group                its name
-- ARGV[+2] prefix               "<ns>:"
-- ARGV[+3] failed_at            as effect_deps.lua's
-- ARGV[+4] queue_time           the callback's queue_time
-- ARGV[+5] ttl                  as effect_deps.lua's
local function finish_group(gk, gck, g, outcome, ctx)
  if outcome ~= 'ok' and outcome ~= 'fail' and outcome ~= 'discard' then
    return
  end
  local work = {}
  -- a group hash of another type or whose counters are no integers
  -- (written by hand) is not counted, named by set_aside_key: the job
  -- stays recorded and the finish goes on (a Lua pcall costs no command)
  local ok, err = pcall(deps_group_count, gk, gck, g, outcome == 'ok', ctx, work)
  if not ok then
    deps_log(gk, 'group not counted', err)
  end
  deps_settle(work, ctx)
end
