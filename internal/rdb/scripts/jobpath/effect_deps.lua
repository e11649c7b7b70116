-- jobpath/effect_deps.lua: dependencies (docs/dependencies.md): a job that
-- ends records its outcome and releases, fails or drops the held jobs
-- waiting for it, in the same step as its finish; the release code that
-- effect_group.lua, deps_enqueue.lua and group_seal.lua share.
--
-- Layout, a section of the finish's effects (finish.lua), sent only for a
-- job with an id that ends (ok, fail, discard; a retry is no end) while
-- the worker knows dependencies are in use (<ns>:resque-go:deps:on, read on
-- the worker's tick, not per job):
-- KEYS[+0] <ns>:resque-go:deps:outcome:<id>   the job's outcome, kept ttl seconds
-- KEYS[+1] <ns>:resque-go:deps:children:<id>  the held jobs waiting for it
-- ARGV[+0] tag                  "p"
-- ARGV[+1] id                   the job's id
-- ARGV[+2] prefix               "<ns>:" (a held job's keys are built from it)
-- ARGV[+3] failed_at            for the failed entry of a held job whose parent failed
-- ARGV[+4] queue_time           for a group callback fired on the way
-- ARGV[+5] ttl                  seconds an outcome and an ended held job are kept
--
-- A held job is the hash <ns>:resque-go:deps:held:<id> (state held, queued,
-- failed or dropped; waiting, the parents not yet ended; policy fail, run
-- or drop; payload, queue, parents, group). Each is moved on only from
-- state held, so a parent's end is applied to it once; the finish itself is
-- applied once (its claim sequence). Plain redis.call: deps_enqueue.lua
-- and group_seal.lua run without hot_globals.lua.

-- deps_log names (set_aside_key) a key written by hand that a step set
-- aside (what it did not do) with err, the error redis.call raised (a
-- table with an err field, or a string).
local function deps_log(key, what, err)
  if type(err) == 'table' then
    err = err.err
  end
  set_aside_key(key, what .. ': ' .. tostring(err))
end

-- deps_outcome_word names a finish's outcome as dependants read it.
local deps_outcome_words = {ok = 'succeeded', fail = 'failed', discard = 'discarded'}

-- deps_push_callback pushes group g's callback for when (complete or
-- success), if one was registered: its args are the registered ones with
-- the group's counts appended.
local function deps_push_callback(gk, g, when, counts, ctx)
  local c = redis.call('HMGET', gk, when .. '_class', when .. '_queue', when .. '_args', when .. '_id')
  if not c[1] then
    return
  end
  local args = c[3] or '[]'
  if string.match(args, '^%[%s*%]$') then
    args = '[' .. counts .. ']'
  else
    args = string.sub(args, 1, -2) .. ',' .. counts .. ']'
  end
  local payload = '{"class":' .. cjson.encode(c[1]) .. ',"args":' .. args .. ',"id":' .. cjson.encode(c[4]) ..
    ',"queue_time":' .. ctx.qt .. ',"group_callback":' .. cjson.encode(g) .. '}'
  redis.call('RPUSH', ctx.prefix .. KEY_QUEUE_PREFIX .. c[2], payload)
  redis.call('SADD', ctx.prefix .. KEY_QUEUES, c[2])
end

-- deps_group_check fires group g (hash gk, its held jobs' set gck) once:
-- when it is sealed, nothing of it is pending and it has not fired. Its
-- callbacks are pushed, its outcome set, and its held jobs join work.
local function deps_group_check(gk, gck, g, ctx, work)
  local v = redis.call('HMGET', gk, 'pending', 'sealed', 'fired', 'succeeded', 'failed', 'total')
  if v[2] ~= '1' or v[3] or (tonumber(v[1]) or 0) > 0 then
    return
  end
  local failed = tonumber(v[5]) or 0
  local outcome = 'failed'
  if failed == 0 then
    outcome = 'succeeded'
  end
  redis.call('HSET', gk, 'fired', '1', 'outcome', outcome)
  local counts = '{"group":' .. cjson.encode(g) .. ',"total":' .. (tonumber(v[6]) or 0) ..
    ',"succeeded":' .. (tonumber(v[4]) or 0) .. ',"failed":' .. failed .. '}'
  deps_push_callback(gk, g, 'complete', counts, ctx)
  if failed == 0 then
    deps_push_callback(gk, g, 'success', counts, ctx)
  end
  work[#work + 1] = {gck, failed == 0, 'group ' .. g}
end

-- deps_group_count counts one end of a job of group g (ok: a success) and
-- fires the group when that was its last pending job. A group never
-- enqueued to (no hash) is left alone.
local function deps_group_count(gk, gck, g, ok, ctx, work)
  if redis.call('EXISTS', gk) == 0 then
    return
  end
  redis.call('HINCRBY', gk, 'pending', '-1')
  if ok then
    redis.call('HINCRBY', gk, 'succeeded', '1')
  else
    redis.call('HINCRBY', gk, 'failed', '1')
  end
  deps_group_check(gk, gck, g, ctx, work)
end

-- deps_group_keys are group g's hash and held jobs' set.
local function deps_group_keys(prefix, g)
  local gk = prefix .. KEY_GROUP_PREFIX .. g
  return gk, gk .. KEY_GROUP_CHILDREN_SUFFIX
end

-- deps_held_event notes, while events are on (the caller gives
-- ctx.released, a list), what became of held job cid (h as deps_release's):
-- {id, payload, queue, event}; the caller writes these events after the
-- job's own (effect_events.lua's held_events).
local function deps_held_event(cid, h, ctx, event)
  local rel = ctx.released
  if rel then
    rel[#rel + 1] = {cid, h[3], h[4], event}
  end
end

-- deps_release pushes held job cid (hash hk; h: HMGET state, policy,
-- payload, queue, group) to its queue: its released event.
local function deps_release(hk, cid, h, ctx)
  redis.call('RPUSH', ctx.prefix .. KEY_QUEUE_PREFIX .. h[4], h[3])
  redis.call('SADD', ctx.prefix .. KEY_QUEUES, h[4])
  redis.call('HSET', hk, 'state', 'queued')
  redis.call('EXPIRE', hk, ctx.ttl)
  deps_held_event(cid, h, ctx, 'released')
end

-- deps_end ends held job cid (hk, h as deps_release's) because parent
-- failed: to failed (policy fail) or dropped. Its own outcome is recorded
-- so that its held jobs and its group learn it (they join work).
-- deps_untag takes held job cid, which will not run, out of the indexes
-- of the tags its payload carries (a finish does it for a job that ran:
-- effect_tags.lua). Only a payload that names "tags" is decoded.
local function deps_untag(cid, payload, ctx)
  if not payload or not string.find(payload, '"tags"', 1, true) then
    return
  end
  local ok, dec = pcall(cjson.decode, payload)
  if not ok or type(dec) ~= 'table' or type(dec['tags']) ~= 'table' then
    return
  end
  for _, tag in ipairs(dec['tags']) do
    if type(tag) == 'string' then
      local key = ctx.prefix .. KEY_TAG_PREFIX .. tag
      local r = redis.pcall('ZREM', key, cid)
      if type(r) == 'table' and r.err then
        deps_log(key, 'tag index not cleared', r)
      end
    end
  end
end

local function deps_end(hk, cid, h, parent, ctx, work)
  deps_untag(cid, h[3], ctx)
  local state = 'failed'
  if h[2] == 'drop' then
    state = 'dropped'
    deps_held_event(cid, h, ctx, 'discarded')
  else
    deps_held_event(cid, h, ctx, 'failed')
    -- a payload that is not JSON (written by hand) goes in as a string,
    -- as a bad payload's failed entry has it: the entry stays valid JSON
    local payload = h[3]
    if not payload or not pcall(cjson.decode, payload) then
      payload = cjson.encode(payload or '')
    end
    redis.call('RPUSH', ctx.prefix .. KEY_FAILED, '{"failed_at":' .. cjson.encode(ctx.failed_at) ..
      ',"payload":' .. payload .. ',"exception":"ResqueGo::ParentFailed","error":' ..
      cjson.encode('parent ' .. parent .. ' did not succeed') .. ',"backtrace":[],"worker":' ..
      cjson.encode(ctx.worker) .. ',"queue":' .. cjson.encode(h[4]) .. '}')
  end
  redis.call('HSET', hk, 'state', state, 'parent_failed', parent)
  redis.call('EXPIRE', hk, ctx.ttl)
  redis.call('SET', ctx.prefix .. KEY_DEP_OUTCOME_PREFIX .. cid, state, 'EX', ctx.ttl)
  if state == 'dropped' then
    -- the count last: a counter that is no integer loses the count only
    local r = redis.pcall('INCR', ctx.prefix .. KEY_DEP_DROPPED)
    if type(r) == 'table' and r.err then
      deps_log(ctx.prefix .. KEY_DEP_DROPPED, 'dropped job not counted', r)
    end
  end
  work[#work + 1] = {ctx.prefix .. KEY_DEP_CHILDREN_PREFIX .. cid, false, cid}
  if h[5] then
    local gk, gck = deps_group_keys(ctx.prefix, h[5])
    deps_group_count(gk, gck, h[5], false, ctx, work)
  end
end

-- deps_settle_one applies work entry w (as deps_settle's) to held job
-- cid (hash hk).
local function deps_settle_one(hk, cid, w, ctx, work)
  local h = redis.call('HMGET', hk, 'state', 'policy', 'payload', 'queue', 'group')
  if h[1] == 'held' then
    if w[2] or h[2] == 'run' then
      if redis.call('HINCRBY', hk, 'waiting', '-1') <= 0 then
        deps_release(hk, cid, h, ctx)
      end
    else
      deps_end(hk, cid, h, w[3], ctx, work)
    end
  end
end

-- deps_settle applies each entry of work, {set of held ids, the parent
-- succeeded, the parent's name}, to the held jobs in the set (which goes),
-- and the entries those add (a failed held job's own held jobs, a group
-- fired on the way), until none is left.
local function deps_settle(work, ctx)
  local i = 1
  while i <= #work do
    local w = work[i]
    i = i + 1
    -- keys written by hand (another type, a counter that is no integer)
    -- are set aside one by one, named by set_aside_key: a set of held
    -- jobs that is no set settles nothing, a held job that cannot be
    -- read or moved on stays as it is, and the others are settled (the
    -- pcalls cost no command)
    local ids = redis.pcall('SMEMBERS', w[1])
    if ids.err then
      deps_log(w[1], 'held jobs not settled', ids)
      ids = {}
    elseif #ids > 0 then
      redis.call('DEL', w[1])
    end
    for _, cid in ipairs(ids) do
      local ok, err = pcall(deps_settle_one, ctx.prefix .. KEY_DEP_HELD_PREFIX .. cid, cid, w, ctx, work)
      if not ok then
        deps_log(ctx.prefix .. KEY_DEP_HELD_PREFIX .. cid, 'held job not settled', err)
      end
    end
  end
end

-- finish_deps records the outcome of job id (okey), ended as the finish's
-- outcome says, and settles the held jobs waiting for it (ckey).
local function finish_deps(okey, ckey, id, outcome, ctx)
  local word = deps_outcome_words[outcome]
  if not word then
    return -- a retry or reschedule: the job has not ended
  end
  redis.call('SET', okey, word, 'EX', ctx.ttl)
  if redis.call('EXISTS', ckey) == 1 then
    deps_settle({{ckey, word == 'succeeded', id}}, ctx)
  end
end
