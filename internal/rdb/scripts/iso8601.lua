-- iso8601.lua: a fragment, not a script. Scripts that write heartbeats
-- are loaded after it (rdb.loadScriptWith), so they share this function.
--
-- iso8601(secs) formats Unix seconds as ISO 8601 UTC with a numeric offset,
-- 2006-01-02T15:04:05+00:00, the form of Ruby's workers:heartbeat values.
local function iso8601(secs)
  local days = math.floor(secs / 86400)
  local rem = secs - days * 86400
  local z = days + 719468
  local era = math.floor(z / 146097)
  local doe = z - era * 146097
  local yoe = math.floor((doe - math.floor(doe / 1460) + math.floor(doe / 36524) - math.floor(doe / 146096)) / 365)
  local y = yoe + era * 400
  local doy = doe - (365 * yoe + math.floor(yoe / 4) - math.floor(yoe / 100))
  local mp = math.floor((5 * doy + 2) / 153)
  local d = doy - math.floor((153 * mp + 2) / 5) + 1
  local m = mp + 3
  if mp >= 10 then m = mp - 9 end
  if m <= 2 then y = y + 1 end
  return string.format('%04d-%02d-%02dT%02d:%02d:%02d+00:00', y, m, d,
    math.floor(rem / 3600), math.floor(rem / 60) % 60, rem % 60)
end
