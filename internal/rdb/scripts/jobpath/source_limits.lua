-- jobpath/source_limits.lua: a claim's source that is a plain queue whose
-- jobs a concurrency cap or a rate limit counts (docs/limits.md). A job
-- over a cap is parked in the cap's list, one over a rate waits in the
-- rate's list until its moment, and the claim takes the next job of the
-- queue, so other classes keep running; what frees a slot moves a parked
-- job back (effect_limits.lua).
--
-- Layout, the limits' description from its base d (the flag "L<d>" of
-- each limited source; Go: jobpath_source_limits.go):
-- ARGV[+0] now-ms          Unix milliseconds
-- ARGV[+1] lease-ms        how long a hold lasts unless renewed
-- ARGV[+2] limit-prefix    "<ns>:resque-go:limit:" (a limit's keys: this, its name, a suffix)
-- ARGV[+3] index           "<ns>:resque-go:limits", the names of limits in use
-- ARGV[+4] queue-prefix    "<ns>:queue:"
-- ARGV[+5] rules           m
-- then seven arguments a rule, m times: kind ("c" a cap, "r" a rate),
-- queue (its queue's name; "" for a class's rule), class ("" for a
-- queue's), path (a per-key rule's dotted payload path; "" for none),
-- name (the limit's name; a per-key rule's up to its key), value (the cap;
-- a rate's interval, milliseconds with a fraction), burst (a rate's
-- tolerance, milliseconds: 1% of its period; "0" for a cap).
--
-- A rate is GCRA: its tat key holds the theoretical arrival time; a job
-- may start when it is at most the burst tolerance (1% of the period)
-- ahead of now, and moves it on by the interval, so starts are one an
-- interval in the long run, and claims that share a moment (a batch's
-- slots) are not held back by a fraction of a millisecond. A job ahead
-- of it waits due at the later of the tat and the last waiting job's due
-- time plus an interval, and the claims of limited sources (and the sweep)
-- move due jobs back.

-- limits_key is the value at a dotted path of a decoded payload, as a
-- string: a string, or an integer written as digits (nil for anything
-- else). A step that is a number indexes an array from 0.
local function limits_key(dec, path)
  local v = dec
  for step in string.gmatch(path, '[^.]+') do
    if type(v) ~= 'table' then
      return nil
    end
    local i = tonum(step)
    local nv = nil
    if i then
      nv = v[i + 1]
    end
    if nv == nil then
      nv = v[step]
    end
    v = nv
  end
  if type(v) == 'string' then
    return v
  end
  if type(v) == 'number' and v == math.floor(v) and math.abs(v) < 9007199254740992 then
    return string.format('%d', v)
  end
  return nil
end

-- limits_class is the class of payload p, read without decoding it when p
-- is in Ruby Resque's compact form ({"class":"...", first) with no other
-- "class" key and no escape in the name (a cjson.decode a job cost Redis
-- more than the rest of the claim); else from the decoded payload. dec is
-- the decoded payload when it was decoded (false: not a JSON object).
local function limits_class(p)
  if sfind(p, '{"class":"', 1, true) == 1 then
    local e = sfind(p, '"', 11, true)
    if e and not sfind(p, '"class"', e, true) then
      local c = ssub(p, 11, e - 1)
      if not sfind(c, '\\', 1, true) then
        return c, nil
      end
    end
  end
  local ok, v = pcall(cjson.decode, p)
  local dec = ok and type(v) == 'table' and v or false
  return dec and dec['class'], dec
end

-- limits_batch is the state the claims of one batch share
-- (finish_claim_batch.lua), so a cap's holders and a rate's tat are read
-- once a batch and written once after its claims (limits_flush) instead of
-- once a job: due, the lists whose due waiting jobs were moved back (to
-- their queue's name); held, each cap's holders as counted (a read, plus the holds taken
-- since); adds, the holds to join (expiry and member, flat) and hk their
-- keys in order; tat, each rate's tat as read or moved, and rk the keys
-- of those moved; keys, the keys of each rule without a path (by the
-- index of its arguments), built once; expiry, the holds' lease end, as
-- whole milliseconds (a score a zset keeps as an integer); num, the
-- description's numbers (limits_num); plan, each queue's and class's
-- rules (limits_plan); fmt, string.format (a global read a job is two
-- hash lookups). Each job's decision is the one it would get alone.
local function limits_batch()
  return {due = {}, held = {}, adds = {}, hk = {}, tat = {}, rk = {}, keys = {}, num = {}, plan = {}, fmt = string.format}
end

-- limits_num is the number ARGV[i] of the limits' description, read once
-- a batch (lim.num): tonumber is a strtod, and the time and a rate's
-- interval have fractions (a strtod of them cost Redis 11,000
-- instructions a job, more than the rest of the claim).
local function limits_num(ARGV, i, lim)
  if not lim then
    return tonum(ARGV[i])
  end
  local v = lim.num[i]
  if not v then
    v = tonum(ARGV[i])
    lim.num[i] = v
  end
  return v
end

-- limits_flush_holds joins the holds a batch noted for the cap whose
-- holders are h (all of them when h is nil).
local function limits_flush_holds(lim, h)
  for _, k in ipairs(lim.hk) do
    local a = lim.adds[k]
    if a and #a > 0 and (h == nil or k == h) then
      rcall('ZADD', k, unpack(a))
      lim.adds[k] = {}
    end
  end
end

-- limits_flush writes what a batch's claims noted: the holds, and each
-- rate's tat moved on (the key outlives it by a second); then it forgets
-- what it read, so a claim that reads the keys itself (claim()) may come
-- next.
local function limits_flush(lim, ARGV, d)
  limits_flush_holds(lim, nil)
  local now = limits_num(ARGV, d, lim)
  for _, tk in ipairs(lim.rk) do
    local tat = lim.tat[tk]
    rcall('SET', tk, string.format('%.3f', tat), 'PX', math.floor(tat - now) + 1000)
  end
  lim.held, lim.adds, lim.hk, lim.tat, lim.rk = {}, {}, {}, {}, {}
end

-- limits_wait puts payload p, from queue q, in a rate's waiting list w,
-- due at the later of the tat and the last waiting job's due time plus an
-- interval.
-- It returns false, putting nothing, when w is a key of another type
-- (written by hand; named by set_aside_key): the caller admits the job
-- now rather than fail the claim of every job of the queue.
local function limits_wait(w, q, p, tat, interval, index, name)
  local due = tat
  local last = rpcall('LINDEX', w, '-1')
  if type(last) == 'table' and last.err then
    set_aside_key(w, 'rate waiting list unusable, its jobs start at once: ' .. last.err)
    return false
  end
  if last then
    local ok, e = pcall(cjson.decode, last)
    local ld = ok and type(e) == 'table' and tonum(e['due'])
    if ld and ld + interval > due then
      due = ld + interval
    end
  end
  rcall('RPUSH', w, limits_entry(q, p, due))
  rpcall('SADD', index, name) -- the index lists; one of another type (written by hand) stops nothing
  return true
end

-- limits_plan is, in a batch whose rules have no path, the rules a job
-- of class (false: no rule reads it) from queue q meets, each with its
-- key and numbers, found once a batch (lim.plan) instead of once a job.
local function limits_plan(q, class, ARGV, d, lim)
  local byq = lim.plan[q]
  if not byq then
    byq = {}
    lim.plan[q] = byq
  end
  local plan = byq[class]
  if plan then
    return plan
  end
  plan = {}
  for r = 0, limits_num(ARGV, d + 5, lim) - 1 do
    local b = d + 6 + 7 * r
    local rq = ARGV[b + 1]
    if rq ~= '' and rq == q or rq == '' and ARGV[b + 2] == class then
      local cap = ARGV[b] == 'c'
      plan[#plan + 1] = {cap = cap, name = ARGV[b + 4], val = tonum(ARGV[b + 5]), burst = tonum(ARGV[b + 6]),
        key = ARGV[d + 2] .. ARGV[b + 4] .. (cap and KEY_LIMIT_HOLDERS_SUFFIX or KEY_LIMIT_TAT_SUFFIX)}
    end
  end
  -- the caps a job of the plan takes, for limits_hold (which joins the
  -- index for a cap's first holder in a batch by its count)
  plan.caps = {}
  for i = 1, #plan do
    if plan[i].cap then
      plan.caps[#plan.caps + 1], plan.caps[#plan.caps + 2] = plan[i].key, plan[i].name
    end
  end
  byq[class] = plan
  return plan
end
