-- unique_release.lua: a fragment (local functions) for scripts that
-- release a deferred unique job (docs/protocol.md#unique-jobs): jobpath/finish.lua on success,
-- unique_clear.lua for an operator; and key_fits.
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
--             the entry), never dropped; so is one whose destination (its
--             queue, the delayed queue, unassigned, with their indexes)
--             is a key of another type (ResqueGo::WrongType), or whose
--             deferrableBy is out of range (Resque::BadPayload: below 0 or
--             past protocol.MaxDelaySeconds)
-- Returns true when the job was released (skey says queued), false when
-- it was recorded in failed (skey untouched): the caller deletes the
-- deferred key only after it (and skey too when false), so an error
-- (failed itself of another type) keeps the payload where it was.

-- key_fits reports whether key is missing or holds a want, and its type
-- (jobpath/finish.lua uses it too).
local function key_fits(key, want)
  local t = redis.call('TYPE', key)['ok']
  return t == 'none' or t == want, t
end

local function release_deferred(skey, deferred, prefix, now, failed, failed_at, worker, queue)
  local ok, d = pcall(cjson.decode, deferred)
  local q = ok and type(d) == 'table' and d['queue']
  local function named(v)
    return (type(v) == 'string' and v ~= '') or type(v) == 'number'
  end
  -- an entry in failed, never a dropped payload
  local function record(exception, why, q)
    local payload = deferred
    if not (ok and type(d) == 'table') then
      payload = cjson.encode(deferred)
    end
    redis.call('RPUSH', failed, '{"failed_at":"' .. failed_at .. '","payload":' .. payload ..
      ',"exception":"' .. exception .. '","error":' .. cjson.encode(why) ..
      ',"backtrace":[],"worker":' .. cjson.encode(worker) .. ',"queue":' .. cjson.encode(q) ..
      ',"processed_by":"","retried_by":"no retry"}')
    return false
  end
  local delay = 0
  if ok and type(d) == 'table' and type(d['unique']) == 'table' and type(d['unique']['deferrableBy']) == 'number' then
    delay = math.floor(d['unique']['deferrableBy'])
    -- bounded as protocol.MaxDelaySeconds (100 years; a test checks the
    -- two agree): a larger one, written by another producer, would make
    -- the release fail at every attempt (now + 9e18 is no expiry Redis
    -- takes) and keep the uid running for ever
    if delay < 0 or delay > 3153600000 then
      if type(q) ~= 'string' or q == '' then
        q = queue
      end
      -- named as written in digits (as Go's error for the same value)
      local by = d['unique']['deferrableBy']
      local shown = string.format('%.17g', by)
      if by == math.floor(by) and math.abs(by) < 1e21 then
        shown = string.format('%.0f', by)
      end
      return record('Resque::BadPayload', 'deferred unique job not released: deferrableBy ' .. shown ..
        ' is out of range (0 to 3153600000 seconds)', q)
    end
  end
  -- where it goes: {key, type} pairs, the first the one that holds it
  local dest
  if (type(q) ~= 'string' or q == '') and ok and type(d) == 'table' and named(d['sourceId']) and named(d['name']) then
    -- a mass job: routed again from unassigned, as producers push it
    if delay > 0 then
      dest = {prefix .. KEY_MASS_DEFERRED, 'zset'}
    else
      dest = {prefix .. KEY_MASS_UNASSIGNED, 'list'}
    end
  elseif type(q) ~= 'string' or q == '' then
    return record('Resque::BadPayload', 'deferred unique job has no queue or is not a JSON object; not released', queue)
  elseif delay > 0 then
    dest = {prefix .. KEY_DELAYED_PREFIX .. string.format('%d', tonumber(now) + delay), 'list',
      prefix .. KEY_TIMESTAMPS_PREFIX .. deferred, 'set', prefix .. KEY_DELAYED_SCHEDULE, 'zset'}
  else
    dest = {prefix .. KEY_QUEUE_PREFIX .. q, 'list', prefix .. KEY_QUEUES, 'set'}
  end
  -- Redis keeps what a script wrote before an error: a key of another
  -- type (written by hand) is found before anything is written, and the
  -- payload goes to failed instead, where a retry finds it
  for i = 1, #dest, 2 do
    local fits, t = key_fits(dest[i], dest[i + 1])
    if not fits then
      if type(q) ~= 'string' then
        q = ''
      end
      return record('ResqueGo::WrongType', 'deferred unique job not released: ' .. dest[i] .. ' holds a ' .. t ..
        ', not a ' .. dest[i + 1], q)
    end
  end
  -- numbers reach Redis as integers (string.format): redis.call writes a
  -- Lua number with 17 significant digits, 1e+15 and up in exponent form
  if delay > 0 and type(q) == 'string' and q ~= '' then
    -- expires a day after it is due: see enqueue_unique.lua
    redis.call('SET', skey, 'queued', 'EX', string.format('%d', delay + 86400))
  else
    redis.call('SET', skey, 'queued')
  end
  if #dest == 2 and dest[2] == 'zset' then
    redis.call('ZADD', dest[1], string.format('%d', tonumber(now) + delay), deferred)
  elseif #dest == 2 then
    redis.call('LPUSH', dest[1], deferred)
  elseif delay > 0 then
    local ts = string.format('%d', tonumber(now) + delay)
    redis.call('RPUSH', dest[1], deferred)
    redis.call('SADD', dest[3], KEY_DELAYED_MEMBER_PREFIX .. ts)
    redis.call('ZADD', dest[5], ts, ts)
  else
    redis.call('RPUSH', dest[1], deferred)
    redis.call('SADD', dest[3], q)
  end
  return true
end
