-- deps_enqueue.lua: enqueue a job with parents (jobs, groups) and/or in a
-- group, in one step (docs/dependencies.md). With jobpath/effect_deps.lua.
--
-- A parent's end and this enqueue are atomic against each other: a parent
-- that has ended (its outcome recorded, a group fired) acts on the job at
-- once; one that has not gets the job's id in its set of held jobs, which
-- its end settles. The first enqueue with parents sets deps:on, which
-- tells workers (on their tick) to record every job's outcome.
--
-- KEYS[1]        <ns>:resque-go:deps:held:<id>   the held job's hash
-- KEYS[2]        <ns>:resque-go:deps:on
-- KEYS[3]        <ns>:resque-go:group:<g>        the job's group's hash (a
--                placeholder name when the job has no group: not read)
-- KEYS[4]        <ns>:queue:<q>
-- KEYS[5]        <ns>:queues
-- KEYS[4+2i]     parent i's outcome: deps:outcome:<id>, or a group's hash
-- KEYS[5+2i]     parent i's held jobs: deps:children:<id>, group:<g>:children
-- ARGV[1]  id            the job's id
-- ARGV[2]  payload
-- ARGV[3]  queue
-- ARGV[4]  policy        fail | run | drop
-- ARGV[5]  parents       the parents' names, JSON (job show)
-- ARGV[6]  group         the job's group, '' for none
-- ARGV[7]  prefix        "<ns>:"
-- ARGV[8]  failed_at
-- ARGV[9]  queue_time
-- ARGV[10] ttl
-- ARGV[11] now           Unix seconds (deps:on's value)
-- ARGV[12] n             how many parents
-- ARGV[12+2i-1], ARGV[12+2i]  parent i's kind ("j" a job, "g" a group) and name
-- ARGV[13+2n]    t, how many tags the job has (Tags, enqueue --tag)
-- then, when t > 0: the tags' indexes, which get the job's id while it is
-- queued or held (a parent's failure that ends it takes it out again,
-- effect_deps.lua; a finish does, effect_tags.lua):
-- KEYS[6+2n..5+2n+t]  <ns>:resque-go:tag:<t_i>
-- ARGV[14+2n]    how many ids one tag's index keeps
-- ARGV[15+2n]    now, Unix milliseconds (the indexes' score)
-- Then, only when the producer asks for the job's events (WithEvent,
-- enqueue --events; docs/events.md), with e = 13+2n, or 15+2n with tags:
-- KEYS[6+2n+t]   <ns>:resque-go:events
-- ARGV[e+1]      the stream's maxlen
-- ARGV[e+2]      its max age, milliseconds ("0": none)
-- ARGV[e+3]      the job's class
-- ARGV[e+4]      now, Unix milliseconds
-- The job's enqueued event is written, then an event for each held job
-- the step settles: released for the job itself when its parents have all
-- succeeded, failed or discarded when one had failed (by its policy), and
-- those of its own held jobs that settles on the way.
--
-- Returns {state, waiting}: state queued (pushed to its queue), held,
-- failed or dropped (a parent had failed), or an error reply: "fired" (the
-- group has fired: no job joins it), "exists" (a held job with this id).
local id, payload, queue, policy, group = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[6]
local n = tonumber(ARGV[12])
local t = tonumber(ARGV[13 + 2 * n])
local ev = 13 + 2 * n -- the events' arguments follow, when sent
if t > 0 then
  ev = ev + 2
end

-- tagged puts the job's id in its tags' indexes (the oldest ids go once
-- an index is full, as enqueue_tracked.lua does), and returns r.
local function tagged(r)
  for i = 1, t do
    local key = KEYS[5 + 2 * n + i]
    redis.call('ZADD', key, ARGV[15 + 2 * n], id)
    redis.call('ZREMRANGEBYRANK', key, 0, -tonumber(ARGV[14 + 2 * n]) - 1)
  end
  return r
end

-- event appends an entry to the stream (sent only with the events section).
local function event(name, eid, class, q)
  local stream, maxage = KEYS[6 + 2 * n + t], ARGV[ev + 2]
  redis.call('XADD', stream, 'MAXLEN', '~', ARGV[ev + 1], '*', 'event', name, 'id', eid, 'class', class,
    'queue', q, 'worker', '', 'attempt', '0', 'duration_ms', '0')
  if maxage ~= '0' then
    redis.call('XTRIM', stream, 'MINID', '~', tostring(tonumber(ARGV[ev + 4]) - tonumber(maxage)))
  end
end

-- settled writes, with events, the events of the held jobs of rel ({id,
-- payload, queue, event}, effect_deps.lua's deps_held_event), and returns r.
local function settled(rel, r)
  if rel then
    for _, x in ipairs(rel) do
      local ok, dec = pcall(cjson.decode, x[2])
      local class = ''
      if ok and type(dec) == 'table' and type(dec['class']) == 'string' then
        class = dec['class']
      end
      event(x[4], x[1], class, x[3])
    end
  end
  return r
end

local rel -- with events, the held jobs settled on the way
if group ~= '' and redis.call('HGET', KEYS[3], 'fired') then
  return redis.error_reply('fired')
end
if n > 0 and redis.call('EXISTS', KEYS[1]) == 1 then
  return redis.error_reply('exists')
end
if group ~= '' then
  redis.call('HINCRBY', KEYS[3], 'total', '1')
  redis.call('HINCRBY', KEYS[3], 'pending', '1')
end
if #ARGV > ev then
  event('enqueued', id, ARGV[ev + 3], queue)
  rel = {}
end
if n == 0 then
  redis.call('RPUSH', KEYS[4], payload)
  redis.call('SADD', KEYS[5], queue)
  return tagged({'queued', 0})
end
redis.call('SET', KEYS[2], ARGV[11], 'NX')
local waiting, failed = 0, nil
for i = 1, n do
  local kind, name = ARGV[11 + 2 * i], ARGV[12 + 2 * i]
  local okey, ckey = KEYS[4 + 2 * i], KEYS[5 + 2 * i]
  local st
  if kind == 'g' then
    st = redis.call('HGET', okey, 'outcome')
    name = 'group ' .. name
  else
    st = redis.call('GET', okey)
  end
  if not st then
    redis.call('SADD', ckey, id)
    waiting = waiting + 1
  elseif st ~= 'succeeded' and not failed then
    failed = name
  end
end
local g = false
if group ~= '' then
  g = group
end
redis.call('HSET', KEYS[1], 'state', 'held', 'waiting', waiting, 'policy', policy, 'payload', payload,
  'queue', queue, 'parents', ARGV[5])
if g then
  redis.call('HSET', KEYS[1], 'group', g)
end
local ctx = {prefix = ARGV[7], failed_at = ARGV[8], qt = ARGV[9], ttl = ARGV[10], worker = 'resque-go enqueue',
  released = rel}
local h = {'held', policy, payload, queue, g}
if failed and policy ~= 'run' then
  local work = {}
  deps_end(KEYS[1], id, h, failed, ctx, work)
  deps_settle(work, ctx)
  return settled(rel, {redis.call('HGET', KEYS[1], 'state'), waiting})
end
if waiting == 0 then
  deps_release(KEYS[1], id, h, ctx)
  return tagged(settled(rel, {'queued', 0}))
end
return tagged({'held', waiting})
