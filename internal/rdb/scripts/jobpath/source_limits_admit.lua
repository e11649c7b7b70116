-- jobpath/source_limits_admit.lua: the admission of a job popped from a
-- plain queue under limits (source_limits.lua, whose layout it reads): a
-- cap's holders and a rate's tat checked, the job parked, put to wait or
-- admitted (limits_admit, limits_admit_plan). Loaded after
-- source_limits.lua (its helpers and a batch's state); the pop and the
-- holds that use it are source_limits_pop.lua.

-- limits_held is how many holds cap holders key h counts (ZCARD, a
-- redis.pcall: it costs what redis.call does). A key of another type
-- (written by hand) counts as full: the job is parked, set aside where
-- queue limits shows it, set_aside_key names the key, and the sweep moves
-- it back once the key is fixed. (A redis.call failed every claim of the
-- queue, so no job of it ran.)
local function limits_held(h)
  local n = rpcall('ZCARD', h)
  if type(n) == 'table' then
    set_aside_key(h, 'cap holders unreadable, its jobs are parked: ' .. tostring(n.err))
    return math.huge
  end
  return n
end

-- limits_tat is rate key tk's theoretical arrival time (Unix ms), 0 for
-- none. A key of another type or a value that is no number reads as 0, as
-- one absurdly far ahead (more than a day past now-ms and interval ms: a
-- tat moves an interval a start) does, named by set_aside_key: the next
-- start's SET writes a good one. Else a hand-written 1e300 held every job
-- of the rate back for good.
local function limits_tat(tk, now, interval)
  local t = tonum(rpcall('GET', tk))
  if t and t > now + interval + 86400000 then
    set_aside_key(tk, 'rate holds ' .. tostring(t) .. ', read as none')
    return 0
  end
  return t or 0
end

-- limits_admit_plan is limits_admit in a batch whose rules have no path
-- (lim.plain): the same decisions, from the job's plan.
local function limits_admit_plan(p, q, ARGV, d, lim, now)
  local class = false
  if lim.classes then
    -- a payload in compact form that starts as the last one did (its
    -- class's prefix, {"class":"C") and has no other "class" key is of
    -- the same class: limits_class's test in two finds instead of five
    local pre = lim.cpre
    if pre and ssub(p, 1, #pre) == pre and not sfind(p, '"class"', #pre, true) then
      class = lim.cname
    else
      local dec
      class, dec = limits_class(p)
      if class and dec == nil then
        lim.cpre, lim.cname = '{"class":"' .. class .. '"', class
      end
      class = class or false
    end
  end
  -- the jobs of a batch are mostly of one queue and class: the last plan
  local plan
  if class == lim.pclass and q == lim.pq then
    plan = lim.pplan
  else
    plan = limits_plan(q, class, ARGV, d, lim)
    lim.pclass, lim.pq, lim.pplan = class, q, plan
  end
  local held, tat = lim.held, lim.tat
  for i = 1, #plan do
    local e = plan[i]
    local k = e.key
    if e.cap then
      local n = held[k]
      if not n then
        n = limits_held(k)
      end
      if n >= e.val and n ~= math.huge then
        -- full, unless some holds ran out (a holder killed)
        limits_flush_holds(lim, k)
        rcall('ZREMRANGEBYSCORE', k, '-inf', '(' .. ARGV[d])
        n = rcall('ZCARD', k)
      end
      held[k] = n
      if n >= e.val then
        rcall('RPUSH', ARGV[d + 2] .. e.name .. KEY_LIMIT_PARKED_SUFFIX, limits_entry(q, p))
        rpcall('SADD', ARGV[d + 3], e.name) -- as limits_wait's
        return nil
      end
    else
      local t = tat[k]
      if not t then
        t = limits_tat(k, now, e.val)
        tat[k] = t
      end
      if t > now + e.burst and limits_wait(ARGV[d + 2] .. e.name .. KEY_LIMIT_WAITING_SUFFIX, q, p, t, e.val, ARGV[d + 3], e.name) then
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
          held = limits_held(h)
        end
        if held >= val and held ~= math.huge then
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
          rpcall('SADD', index, name) -- the index lists; one of another type (written by hand) stops nothing
          return nil
        end
        -- the index names a cap while it has holders: joined by the first
        caps[#caps + 1], caps[#caps + 2] = h, held == 0 and name
      else
        local tk = key
        local tat = lim and lim.tat[tk]
        if not tat then
          tat = limits_tat(tk, now, val)
          if lim then
            lim.tat[tk] = tat
          end
        end
        if tat > now + limits_num(ARGV, b + 6, lim) and
          limits_wait((base or prefix .. name) .. KEY_LIMIT_WAITING_SUFFIX, q, p, tat, val, index, name) then
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
