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
-- rules (limits_plan). Each job's
-- decision is the one it would get alone.
local function limits_batch()
  return {due = {}, held = {}, adds = {}, hk = {}, tat = {}, rk = {}, keys = {}, num = {}, plan = {}}
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
  local now = tonum(ARGV[d])
  for _, tk in ipairs(lim.rk) do
    local tat = lim.tat[tk]
    rcall('SET', tk, string.format('%.3f', tat), 'PX', math.floor(tat - now) + 1000)
  end
  lim.held, lim.adds, lim.hk, lim.tat, lim.rk = {}, {}, {}, {}, {}
end

-- limits_wait puts payload p, from queue q, in a rate's waiting list w,
-- due at the later of the tat and the last waiting job's due time plus an
-- interval.
local function limits_wait(w, q, p, tat, interval, index, name)
  local due = tat
  local last = rcall('LINDEX', w, '-1')
  if last then
    local ok, e = pcall(cjson.decode, last)
    local ld = ok and type(e) == 'table' and tonum(e['due'])
    if ld and ld + interval > due then
      due = ld + interval
    end
  end
  rcall('RPUSH', w, limits_entry(q, p, due))
  rcall('SADD', index, name)
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

-- limits_admit_plan is limits_admit in a batch whose rules have no path
-- (lim.plain): the same decisions, from the job's plan.
local function limits_admit_plan(p, q, ARGV, d, lim)
  local class = false
  if lim.classes then
    class = limits_class(p) or false
  end
  local plan = limits_plan(q, class, ARGV, d, lim)
  local now, held, tat = limits_num(ARGV, d, lim), lim.held, lim.tat
  for i = 1, #plan do
    local e = plan[i]
    local k = e.key
    if e.cap then
      local n = held[k]
      if not n then
        n = rcall('ZCARD', k)
      end
      if n >= e.val then
        -- full, unless some holds ran out (a holder killed)
        limits_flush_holds(lim, k)
        rcall('ZREMRANGEBYSCORE', k, '-inf', '(' .. ARGV[d])
        n = rcall('ZCARD', k)
      end
      held[k] = n
      if n >= e.val then
        rcall('RPUSH', ARGV[d + 2] .. e.name .. KEY_LIMIT_PARKED_SUFFIX, limits_entry(q, p))
        rcall('SADD', ARGV[d + 3], e.name)
        return nil
      end
    else
      local t = tat[k]
      if not t then
        t = tonum(rcall('GET', k)) or 0
        tat[k] = t
      end
      if t > now + e.burst then
        limits_wait(ARGV[d + 2] .. e.name .. KEY_LIMIT_WAITING_SUFFIX, q, p, t, e.val, ARGV[d + 3], e.name)
        return nil
      end
    end
  end
  for i = 1, #plan do
    local e = plan[i]
    local k = e.key
    if not e.cap then
      local t = tat[k]
      if t < now then
        t = now
      end
      if not lim.rk[k] then
        lim.rk[k] = true
        lim.rk[#lim.rk + 1] = k
      end
      tat[k] = t + e.val
    end
  end
  return plan.caps
end

-- limits_admit decides on payload p, popped from queue q: it returns the
-- holders keys of the caps whose slot it takes and their names (to join
-- once the claim's sequence is known), the rates' starts written (or, in
-- a batch, noted in lim), or nil when it parked the job or put it to wait.
local function limits_admit(p, q, ARGV, d, lim)
  local now, m = limits_num(ARGV, d, lim), limits_num(ARGV, d + 5, lim)
  local prefix, index = ARGV[d + 2], ARGV[d + 3]
  local class, dec = false, nil
  local caps, rates = {}, {}
  for r = 0, m - 1 do
    local b = d + 6 + 7 * r
    local rq, rc, path, name = ARGV[b + 1], ARGV[b + 2], ARGV[b + 3], ARGV[b + 4]
    local applies
    if rq ~= '' then
      applies = rq == q
    else
      if class == false then
        class, dec = limits_class(p)
      end
      applies = class == rc
    end
    if applies and path ~= '' then
      if not dec then
        -- a per-key rule reads its key from the decoded payload
        local ok, v = pcall(cjson.decode, p)
        dec = ok and type(v) == 'table' and v or false
      end
      local key = limits_key(dec, path)
      applies = key ~= nil
      if applies then
        name = name .. key
      end
    end
    if applies then
      local val, base, key = limits_num(ARGV, b + 5, lim), nil, nil
      if lim and path == '' then
        key = lim.keys[b]
      end
      if not key then
        base = prefix .. name
        key = base .. (ARGV[b] == 'c' and KEY_LIMIT_HOLDERS_SUFFIX or KEY_LIMIT_TAT_SUFFIX)
        if lim and path == '' then
          lim.keys[b] = key
        end
      end
      if ARGV[b] == 'c' then
        local h = key
        local held = lim and lim.held[h]
        if not held then
          held = rcall('ZCARD', h)
        end
        if held >= val then
          -- full, unless some holds ran out (a holder killed)
          if lim then
            limits_flush_holds(lim, h)
          end
          rcall('ZREMRANGEBYSCORE', h, '-inf', '(' .. ARGV[d])
          held = rcall('ZCARD', h)
        end
        if lim then
          lim.held[h] = held
        end
        if held >= val then
          rcall('RPUSH', (base or prefix .. name) .. KEY_LIMIT_PARKED_SUFFIX, limits_entry(q, p))
          rcall('SADD', index, name)
          return nil
        end
        -- the index names a cap while it has holders: joined by the first
        caps[#caps + 1], caps[#caps + 2] = h, held == 0 and name
      else
        local tk = key
        local tat = lim and lim.tat[tk]
        if not tat then
          tat = tonum(rcall('GET', tk)) or 0
          if lim then
            lim.tat[tk] = tat
          end
        end
        if tat > now + limits_num(ARGV, b + 6, lim) then
          limits_wait((base or prefix .. name) .. KEY_LIMIT_WAITING_SUFFIX, q, p, tat, val, index, name)
          return nil
        end
        rates[#rates + 1], rates[#rates + 2], rates[#rates + 3] = tk, val, tat
      end
    end
  end
  for i = 1, #rates, 3 do
    -- the next start's moment; the key outlives it by a second
    local tat = rates[i + 2]
    if tat < now then
      tat = now
    end
    if lim then
      if not lim.rk[rates[i]] then
        lim.rk[rates[i]] = true
        lim.rk[#lim.rk + 1] = rates[i]
      end
      lim.tat[rates[i]] = tat + rates[i + 1]
    else
      rcall('SET', rates[i], string.format('%.3f', tat + rates[i + 1]), 'PX', math.floor(tat - now + rates[i + 1]) + 1000)
    end
  end
  return caps
end

-- limits_pop takes the next job of a limited source's list that no limit
-- holds back: due waiting jobs of its rates first go back to their
-- queues, then jobs over a limit are parked or put to wait, at most 16 a
-- claim (the claim then finds none: the next one goes on). It returns the
-- payload (or the LPOP's error reply, a key of another type) and the caps
-- to join. due, when given, is a table the claims of one batch share:
-- they share a moment, so the waiting jobs due then are moved back by the
-- first claim of each list only.
local function limits_pop(list, ARGV, d, lim)
  local now, m, qprefix = limits_num(ARGV, d, lim), limits_num(ARGV, d + 5, lim), ARGV[d + 4]
  if lim and lim.plain == nil then
    -- no rule has a path: each job's rules come from a plan
    -- (limits_admit_plan); classes: some rule is a class's
    lim.plain, lim.classes = true, false
    for r = 0, m - 1 do
      local b = d + 6 + 7 * r
      lim.plain = lim.plain and ARGV[b + 3] == ''
      lim.classes = lim.classes or ARGV[b + 1] == ''
    end
  end
  local q = lim and lim.due[list]
  if not q then
    q = ssub(list, #qprefix + 1)
    for r = 0, m - 1 do
      local b = d + 6 + 7 * r
      if ARGV[b] == 'r' and ARGV[b + 3] == '' and (ARGV[b + 1] == '' or ARGV[b + 1] == q) then
        limits_due(ARGV[d + 2] .. ARGV[b + 4] .. KEY_LIMIT_WAITING_SUFFIX, now, qprefix, 16)
      end
    end
    if lim then
      lim.due[list] = q
    end
  end
  for _ = 1, 16 do
    local p = rpcall('LPOP', list)
    if not p or p.err then
      return p, nil
    end
    local caps
    if lim and lim.plain then
      caps = limits_admit_plan(p, q, ARGV, d, lim)
    else
      caps = limits_admit(p, q, ARGV, d, lim)
    end
    if caps then
      return p, caps
    end
  end
  return nil, nil
end

-- limits_hold joins the caps a claimed job takes, as member (worker id and
-- claim sequence) until the lease's end; in a batch (lim) it notes them
-- for limits_flush.
local function limits_hold(caps, member, ARGV, d, lim)
  if #caps == 0 then
    return
  end
  local expiry = lim and lim.expiry
  if not expiry then
    expiry = tonum(ARGV[d]) + tonum(ARGV[d + 1])
    if lim then
      expiry = string.format('%d', math.ceil(expiry))
      lim.expiry = expiry
    end
  end
  for i = 1, #caps, 2 do
    if lim then
      local h = caps[i]
      local a = lim.adds[h]
      if not a then
        a = {}
        lim.adds[h] = a
        lim.hk[#lim.hk + 1] = h
      end
      a[#a + 1], a[#a + 2] = expiry, member
      local n = lim.held[h]
      lim.held[h] = n + 1
      if n == 0 and caps[i + 1] then
        rcall('SADD', ARGV[d + 3], caps[i + 1])
      end
    else
      rcall('ZADD', caps[i], expiry, member)
      if caps[i + 1] then
        rcall('SADD', ARGV[d + 3], caps[i + 1])
      end
    end
  end
end
