-- jobpath/source_limits_pop.lua: a limited plain source's pop and holds
-- (source_limits.lua, whose layout it reads): the next job no limit holds
-- back, taken after the due waiting jobs of its rates go back to their
-- queues, each popped job decided by source_limits_admit.lua; and the
-- holds of the caps a claimed job takes, joined once the claim's sequence
-- is known. Loaded after source_limits_admit.lua.

-- limits_pop takes the next job of a limited source's list that no limit
-- holds back: due waiting jobs of its rates first go back to their
-- queues, then jobs over a limit are parked or put to wait, at most 16 a
-- claim (the claim then finds none: the next one goes on). It returns the
-- payload (or the LPOP's error reply, a key of another type) and the caps
-- to join. due, when given, is a table the claims of one batch share:
-- they share a moment, so the waiting jobs due then are moved back by the
-- first claim of each list only.
local function limits_pop(list, ARGV, d, lim)
  local now, m
  if lim and lim.nowd == d then
    -- the batch's claims read the time and the rules' count once
    now, m = lim.now, lim.m
  else
    now, m = limits_num(ARGV, d, lim), limits_num(ARGV, d + 5, lim)
    if lim then
      lim.nowd, lim.now, lim.m = d, now, m
    end
  end
  local qprefix = ARGV[d + 4]
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
      caps = limits_admit_plan(p, q, ARGV, d, lim, now)
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
    -- the time is read once a batch (limits_num: a strtod of it costs
    -- 4,000 instructions)
    expiry = limits_num(ARGV, d, lim) + limits_num(ARGV, d + 1, lim)
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
        rpcall('SADD', ARGV[d + 3], caps[i + 1]) -- as limits_wait's
      end
    else
      rcall('ZADD', caps[i], expiry, member)
      if caps[i + 1] then
        rpcall('SADD', ARGV[d + 3], caps[i + 1]) -- as limits_wait's
      end
    end
  end
end
