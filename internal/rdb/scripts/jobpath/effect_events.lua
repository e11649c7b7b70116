-- jobpath/effect_events.lua: a job's state change appended to the
-- namespace's events stream (docs/events.md), in the step that makes it:
-- started at the claim, its end at the finish. Sent only while events are
-- on; off, nothing of it is sent or run.
--
-- Layout, a section of the finish's effects (finish.lua):
-- KEYS[+0] <ns>:resque-go:events     the stream
-- ARGV[+0] tag             "e"
-- ARGV[+1] event           succeeded | failed | cancelled | retried | rescheduled | discarded
-- ARGV[+2] maxlen          entries the stream keeps (about: XADD MAXLEN ~)
-- ARGV[+3] max-age         milliseconds an entry is kept; "0": by count only
-- ARGV[+4] job-id          the job's id ("" when it has none)
-- ARGV[+5] attempt         the attempt that ended (1 = first)
-- ARGV[+6] duration        milliseconds the attempt ran
-- The class, queue, worker and time are the finish's (ARGV[+5], ARGV[+6],
-- ARGV[+0], ARGV[+3]). The claim's side (started) reads the claim's
-- layout: the stream after the sources' lists and its section after the
-- unique key prefix (claim.lua).

-- events_add appends one entry of field/value pairs to stream, trimmed to
-- about maxlen entries and, when maxage is not "0", to those younger than
-- maxage milliseconds (now: Unix seconds). Trimming with "~" removes whole
-- nodes only: usually nothing, cheaply.
-- A stream key of another type (written by hand) loses the event, not
-- the step: the XADD is a redis.pcall (which costs what redis.call does),
-- and set_aside_key names the key; the job is claimed or finished as if
-- events were off. (A redis.call would fail the whole claim or finish, so
-- no job would run while the key stays.)
local function events_add(stream, maxlen, maxage, now, ...)
  local r = rpcall('XADD', stream, 'MAXLEN', '~', maxlen, '*', ...)
  if type(r) == 'table' and r.err then
    set_aside_key(stream, 'events stream not written: ' .. r.err)
    return
  end
  if maxage ~= '0' then
    rcall('XTRIM', stream, 'MINID', '~', tostring(tonum(now) * 1000 - tonum(maxage)))
  end
end

-- held_events appends the event of each held job of rel ({id, payload,
-- queue, event}: effect_deps.lua's deps_held_event): released, or failed
-- or discarded by a parent's failure, in the order they were settled:
-- after the end that settled them, in its step. There is no worker (as
-- for enqueued) and no attempt.
local function held_events(stream, maxlen, maxage, now, rel)
  for i = 1, #rel do
    local r = rel[i]
    local ok, dec = pcall(cjson.decode, r[2])
    local class = ''
    if ok and type(dec) == 'table' and type(dec['class']) == 'string' then
      class = dec['class']
    end
    events_add(stream, maxlen, maxage, now, 'event', r[4], 'id', r[1], 'class', class, 'queue', r[3],
      'worker', '', 'attempt', '0', 'duration_ms', '0')
  end
end

-- finish_event appends the end of a job's attempt (the finish's section
-- at e, its keys and arguments at ko and ao), then the events of the held
-- jobs its end settled (rel, nil for none).
local function finish_event(KEYS, ARGV, e, ko, ao, rel)
  local k, a = e[1], e[2]
  events_add(KEYS[k], ARGV[a + 1], ARGV[a + 2], ARGV[ao + 4],
    'event', ARGV[a], 'id', ARGV[a + 3], 'class', ARGV[ao + 6], 'queue', ARGV[ao + 7],
    'worker', ARGV[ao + 1], 'attempt', ARGV[a + 4], 'duration_ms', ARGV[a + 5])
  if rel then
    held_events(KEYS[k], ARGV[a + 1], ARGV[a + 2], ARGV[ao + 4], rel)
  end
end

-- claim_event appends a claimed job's start: its id and class from the
-- payload, the queue it came from (a queue's key less the queue prefix
-- ARGV[a + 2], or the ring's q), the worker, and the attempt the claim
-- knows of (the attempts counter it read, or the payload's failCount).
-- a is the index of the claim's events section.
local function claim_event(stream, ARGV, a, payload, key, q, wid, attempts, now)
  local ok, dec = pcall(cjson.decode, payload)
  local id, class, prior = '', '', tonum(attempts) or 0
  if ok and type(dec) == 'table' then
    local v = dec['id']
    if type(v) == 'string' or type(v) == 'number' then
      id = tostring(v)
    end
    if type(dec['class']) == 'string' then
      class = dec['class']
    end
    local fc = tonum(dec['failCount'])
    if fc and fc > prior then
      prior = fc
    end
  end
  if not q then
    local p = ARGV[a + 2]
    q = key
    if ssub(key, 1, #p) == p then
      q = ssub(key, #p + 1)
    end
  end
  events_add(stream, ARGV[a], ARGV[a + 1], now,
    'event', 'started', 'id', id, 'class', class, 'queue', q, 'worker', wid, 'attempt', tostring(prior + 1))
end
