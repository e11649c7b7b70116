-- jobpath/effect_waiting.lua: the status of a retried job's next copy,
-- "waiting", for a resque-v3 monitored job (docs/protocol.md#job-status).
--
-- Layout, a section of the finish's effects (finish.lua), sent only for a
-- retry or reschedule of a monitored job:
-- KEYS[+0] <ns>:job:<new-id>:status  the copy's status
-- ARGV[+0] tag                  "n"
local function finish_waiting(key, now)
  rcall('SET', key, '{"status":"waiting","updated":' .. now .. '}', 'EX', '86400')
end
