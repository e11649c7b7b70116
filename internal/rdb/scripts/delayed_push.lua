-- delayed_push.lua: a fragment (local functions) for promote_batch.lua and
-- delayed_queue_now.lua: how a delayed item's payload reaches its
-- destination, the same whether a mover promotes it when due or an
-- operator queues it now.
--
-- push_promoted(dest, payload, kind): LPUSH for kind "unassigned" (as
--   mass-queue producers push: allocators pop the other end), else RPUSH
--   (as Resque pushes); returns nil, or, when dest holds another type (a
--   key written by hand), {"wrongtype", dest, type} with nothing pushed.
--   Any other error is raised.
-- push_failed(dest, entry): RPUSH entry to dest (failed), with the same
--   returns.
-- enqueued_event(stream, payload, queue, maxlen, maxage): appends the
--   enqueued event of payload to the events stream (docs/events.md);
--   maxage in milliseconds, "0" for none.
local function push_checked(cmd, dest, value)
  local pushed = redis.pcall(cmd, dest, value)
  if type(pushed) == 'table' then
    local err = tostring(pushed.err)
    if string.sub(err, 1, 9) == 'WRONGTYPE' then
      return {'wrongtype', dest, redis.call('TYPE', dest)['ok']}
    end
    return redis.error_reply('push ' .. dest .. ': ' .. err)
  end
  return nil
end

local function push_promoted(dest, payload, kind)
  if kind == 'unassigned' then
    return push_checked('LPUSH', dest, payload)
  end
  return push_checked('RPUSH', dest, payload)
end

local function push_failed(dest, entry)
  return push_checked('RPUSH', dest, entry)
end

local function enqueued_event(stream, payload, queue, maxlen, maxage)
  local ok, dec = pcall(cjson.decode, payload)
  local id, class = '', ''
  if ok and type(dec) == 'table' then
    if type(dec['id']) == 'string' or type(dec['id']) == 'number' then
      id = tostring(dec['id'])
    end
    if type(dec['class']) == 'string' then
      class = dec['class']
    end
  end
  redis.call('XADD', stream, 'MAXLEN', '~', maxlen, '*', 'event', 'enqueued', 'id', id, 'class', class,
    'queue', queue, 'worker', '', 'attempt', '0', 'duration_ms', '0')
  if maxage ~= '0' then
    local t = redis.call('TIME')
    redis.call('XTRIM', stream, 'MINID', '~', tostring(tonumber(t[1]) * 1000 - tonumber(maxage)))
  end
end
