-- jobpath/effect_tags.lua: a job that carries tags leaves its tags'
-- indexes when it ends (docs/events.md#tags). Sent only for a job with
-- tags whose end is final (ok, fail, discard; a retried or rescheduled
-- job stays listed).
--
-- Layout, a section of the finish's effects (finish.lua):
-- KEYS[+0] <ns>:resque-go:tag:<t>    the first tag's index; one key for each tag
-- ARGV[+0] tag             "t"
-- ARGV[+1] tags            how many tags (keys) the section has
-- ARGV[+2] job-id          the job's id, the indexes' member
-- An index whose key holds another type (written by hand) is skipped,
-- named by set_aside_key: the job is recorded and its other indexes and
-- effects are written all the same (a redis.pcall costs what redis.call
-- does).
local function finish_tags(KEYS, ARGV, k, a)
  local id = ARGV[a + 1]
  for i = 0, tonum(ARGV[a]) - 1 do
    local r = rpcall('ZREM', KEYS[k + i], id)
    if type(r) == 'table' and r.err then
      set_aside_key(KEYS[k + i], 'tag index not updated: ' .. r.err)
    end
  end
end
