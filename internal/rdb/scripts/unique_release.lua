-- unique_release.lua: a fragment (local functions) for scripts that
-- release a deferred unique job (protocol.md 8): finish.lua on success,
-- unique_clear.lua for an operator.
--
-- release_deferred(skey, deferred, prefix, now, failed, failed_at, worker, queue)
--   skey      unique:<uid>:state (set to queued: the job is queued again)
--   deferred  the parked payload; it names its queue ("queue") and its
--             delay ("unique":{"deferrableBy":s}); a mass job (sourceId
--             and name, no queue) goes back through unassigned, after its
--             delay through <prefix>resque-go:mass:deferred (a zset of
--             payload -> due, which allocators empty into unassigned)
--   prefix    "<ns>:": the queue's, queues' and delayed keys are built from
--             it (the queue is only known from the payload)
--   now       Unix seconds; a delay files it in delayed:<now + delay>
--   failed    the failed list, for a payload that names no queue or is not
--             a JSON object: recorded there (failed_at, worker, queue fill
--             the entry), never dropped
-- Returns nothing.
local function release_deferred(skey, deferred, prefix, now, failed, failed_at, worker, queue)
  local ok, d = pcall(cjson.decode, deferred)
  local q = ok and type(d) == 'table' and d['queue']
  local function named(v)
    return (type(v) == 'string' and v ~= '') or type(v) == 'number'
  end
  if (type(q) ~= 'string' or q == '') and ok and type(d) == 'table' and named(d['sourceId']) and named(d['name']) then
    -- a mass job: routed again from unassigned, as producers push it
    local delay = 0
    if type(d['unique']) == 'table' and type(d['unique']['deferrableBy']) == 'number' then
      delay = math.floor(d['unique']['deferrableBy'])
    end
    redis.call('SET', skey, 'queued')
    if delay > 0 then
      redis.call('ZADD', prefix .. 'resque-go:mass:deferred', tonumber(now) + delay, deferred)
    else
      redis.call('LPUSH', prefix .. 'unassigned', deferred)
    end
    return
  end
  if type(q) ~= 'string' or q == '' then
    local payload = deferred
    if not (ok and type(d) == 'table') then
      payload = cjson.encode(deferred)
    end
    redis.call('RPUSH', failed, '{"failed_at":"' .. failed_at .. '","payload":' .. payload ..
      ',"exception":"Resque::BadPayload","error":"deferred unique job has no queue or is not a JSON object; not released",' ..
      '"backtrace":[],"worker":' .. cjson.encode(worker) .. ',"queue":' .. cjson.encode(queue) ..
      ',"processed_by":"","retried_by":"no retry"}')
    return
  end
  local delay = 0
  if type(d['unique']) == 'table' and type(d['unique']['deferrableBy']) == 'number' then
    delay = math.floor(d['unique']['deferrableBy'])
  end
  local p = prefix
  if delay > 0 then
    -- expires a day after it is due: see enqueue_unique.lua
    redis.call('SET', skey, 'queued', 'EX', delay + 86400)
  else
    redis.call('SET', skey, 'queued')
  end
  if delay > 0 then
    local ts = string.format('%d', tonumber(now) + delay)
    redis.call('RPUSH', p .. 'delayed:' .. ts, deferred)
    redis.call('SADD', p .. 'timestamps:' .. deferred, 'delayed:' .. ts)
    redis.call('ZADD', p .. 'delayed_queue_schedule', ts, ts)
  else
    redis.call('RPUSH', p .. 'queue:' .. q, deferred)
    redis.call('SADD', p .. 'queues', q)
  end
end
