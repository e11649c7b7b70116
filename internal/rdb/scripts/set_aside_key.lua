-- set_aside_key.lua: a fragment, not a script: loaded before the modules
-- and scripts that call it (the per-job library's prologue, hot.go; the
-- limits' and the dependencies' scripts).
--
-- set_aside_key(key, what) names a key written by hand (of another type,
-- or holding a value no resque-go process writes) that a step set aside,
-- and what the step did not do: a warning in the Redis log, and the key's
-- field in <ns>:resque-go:set_aside (a hash of {"at":<Unix s>,"what":...},
-- read by `resque-go stats`, the dashboard and client.Stats). The hash
-- names at most SET_ASIDE_MAX keys and expires SET_ASIDE_TTL seconds after
-- its last write, so a key fixed or deleted stops showing within a day.
-- Nothing here fails the step that calls it: that hash of another type is
-- left as it is.
local function set_aside_key(key, what)
  redis.log(redis.LOG_WARNING, 'resque-go: ' .. key .. ': ' .. what .. ' (fix or delete the key)')
  local i = string.find(key, ':' .. KEY_OWN_PREFIX, 1, true)
  if not i then
    return
  end
  local h = string.sub(key, 1, i) .. KEY_SET_ASIDE
  local n = redis.pcall('HLEN', h)
  if type(n) ~= 'number' or (n >= tonumber(SET_ASIDE_MAX) and redis.pcall('HEXISTS', h, key) ~= 1) then
    return
  end
  redis.pcall('HSET', h, key, cjson.encode({at = tonumber(redis.call('TIME')[1]), what = what}))
  redis.pcall('EXPIRE', h, SET_ASIDE_TTL)
end
