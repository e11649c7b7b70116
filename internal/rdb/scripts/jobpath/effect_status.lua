-- jobpath/effect_status.lua: a finished job's status (docs/protocol.md#job-status),
-- written by the finish; the claim sets it to running (effect_marks.lua).
--
-- Layout, a section of the finish's effects (finish.lua), sent only for a
-- job with a status to write:
-- KEYS[+0] <ns>:job:<id>:status  the job's status
-- ARGV[+0] tag              "s"
-- ARGV[+1] status           "v3:<status>" (resque-v3 string statuses) or
--                           "php:<code>" (php-resque integer statuses, only
--                           when the producer asked for tracking)
local function finish_status(key, status, now)
  local kind, value = string.match(status, '^(%w+):(.+)$')
  if kind == 'v3' then
    rcall('SET', key, '{"status":"' .. value .. '","updated":' .. now .. '}', 'EX', '86400')
  elseif kind == 'php' then
    local cur = rcall('GET', key)
    if cur then
      local ok, st = pcall(cjson.decode, cur)
      if ok and type(st) == 'table' and type(st['status']) == 'number' then
        st['status'] = tonum(value)
        st['updated'] = tonum(now)
        if value == '3' or value == '4' then
          -- php-resque expires a finished job's status after a day
          rcall('SET', key, cjson.encode(st), 'EX', '86400')
        else
          rcall('SET', key, cjson.encode(st), 'KEEPTTL')
        end
      end
    end
  end
end
