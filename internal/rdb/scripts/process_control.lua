-- process_control.lua: ask one resque-go process to quiet, resume or stop
-- (resque-go process quiet|resume|stop). The request is stored (a process
-- whose subscription was down reads it when it reconnects) and published
-- (a subscribed process acts at once), in one step with the check that the
-- process is a resque-go one: Ruby, PHP and Node workers listen to neither,
-- so a request to them is refused rather than left unread.
--
-- KEYS[1] <ns>:resque-go:heartbeat_interval   hash: resque-go worker id -> interval
-- KEYS[2] <ns>:resque-go:control:<host>:<pid> the stored request
-- ARGV[1] "<action> <request id>"
-- ARGV[2] time to live of the stored request, seconds
-- ARGV[3] the channel (<ns>:resque-go:control)
-- ARGV[4] the process, "<host>:<pid>"
-- ARGV[5..] the registered worker ids of that process (the caller read them)
--
-- Returns "ok" when the request was stored and published, "foreign" when
-- none of the worker ids is a resque-go worker's.
local ours = false
for i = 5, #ARGV do
  if redis.call('HEXISTS', KEYS[1], ARGV[i]) == 1 then
    ours = true
    break
  end
end
if not ours then
  return 'foreign'
end
redis.call('SET', KEYS[2], ARGV[1], 'EX', ARGV[2])
redis.call('PUBLISH', ARGV[3], ARGV[1] .. ' ' .. ARGV[4])
return 'ok'
