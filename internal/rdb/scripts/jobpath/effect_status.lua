-- jobpath/effect_status.lua: a finished job's status (docs/protocol.md#job-status),
-- written by the finish; the claim sets it to running (effect_marks.lua).
--
-- Layout: the finish's (finish.lua): KEYS[+5] the status key, ARGV[+4]
-- "" none, "v3:<status>" (resque-v3 string statuses) or "php:<code>"
-- (php-resque integer statuses, only when the producer asked for
-- tracking), ARGV[+5] now.
local function finish_status(KEYS, ARGV, ko, ao)
  local kind, value = nil, nil
  if ARGV[ao + 4] ~= '' then
    kind, value = string.match(ARGV[ao + 4], '^(%w+):(.+)$')
  end
  if kind == 'v3' then
    rcall('SET', KEYS[ko + 5], '{"status":"' .. value .. '","updated":' .. ARGV[ao + 5] .. '}', 'EX', '86400')
  elseif kind == 'php' then
    local cur = rcall('GET', KEYS[ko + 5])
    if cur then
      local ok, st = pcall(cjson.decode, cur)
      if ok and type(st) == 'table' and type(st['status']) == 'number' then
        st['status'] = tonum(value)
        st['updated'] = tonum(ARGV[ao + 5])
        if value == '3' or value == '4' then
          -- php-resque expires a finished job's status after a day
          rcall('SET', KEYS[ko + 5], cjson.encode(st), 'EX', '86400')
        else
          rcall('SET', KEYS[ko + 5], cjson.encode(st), 'KEEPTTL')
        end
      end
    end
  end
end
