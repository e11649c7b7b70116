-- mass_route.lua: local functions shared by the mass-queue allocation
-- scripts (loaded before them; no KEYS or ARGV of its own).
--
-- mass_route(ns, r, kind, source, job, now_ms, alive_ms) returns the pool
-- of a source's job, or nil and the reason it has none:
--   ns       "<ns>:"; the override keys <ns>src:<source>:cfg:<job> and
--            <ns>src:<source>:cfg:default are built here, since the
--            source and job are only known after the pop
--   r        the decoded routing table (massqueue.Config.Routing):
--            {"static":{"<pool>":1,...}, "batch":{"<pool>":1,...},
--             "mapping":{"static":{"<source>":{"<job>":"<pool>"}},"batch":{...}}}
--            with "default" as the source and job wildcards
--   kind     "static" or "batch"
--   now_ms, alive_ms: a static pool not in r exists when some pool
--            manager registered it (<ns>static:pools, pool -> last beat,
--            ms) within alive_ms; a batch pool not in r exists when some
--            unit ever registered in it (<ns>pool:<pool>:unit_queues)
--
-- Lookup order: src:<s>:cfg:<j>, src:<s>:cfg:default, then the mapping:
-- <s>.<j>, default.<j>, default.default (the released server's order).
local function mass_pool_exists(ns, r, kind, pool, now_ms, alive_ms)
  if type(r[kind]) == 'table' and r[kind][pool] then
    return true
  end
  if kind == 'static' then
    local beat = redis.call('ZSCORE', ns .. KEY_MASS_STATIC_POOLS, pool)
    return beat ~= false and tonumber(beat) >= now_ms - alive_ms
  end
  return redis.call('EXISTS', ns .. KEY_MASS_POOL_PREFIX .. pool .. KEY_MASS_UNIT_QUEUES_SUFFIX) == 1
end

local function mass_route(ns, r, kind, source, job, now_ms, alive_ms)
  -- where the pool came from is named only in a failure's reason: built
  -- then, not for every payload routed (a concatenation each)
  local cfg = KEY_MASS_ROUTE_PREFIX .. source .. KEY_MASS_ROUTE_SEP
  local pool, from = redis.call('GET', ns .. cfg .. job), 1
  if not pool then
    pool, from = redis.call('GET', ns .. cfg .. 'default'), 2
  end
  if not pool then
    local m = type(r.mapping) == 'table' and r.mapping[kind]
    if type(m) ~= 'table' then
      return nil, 'the config has no ' .. kind .. ' mapping'
    end
    local s, d = m[source], m['default']
    if type(s) == 'table' and type(s[job]) == 'string' then
      pool, from = s[job], 3
    elseif type(d) == 'table' and type(d[job]) == 'string' then
      pool, from = d[job], 4
    elseif type(d) == 'table' and type(d['default']) == 'string' then
      pool, from = d['default'], 5
    else
      return nil, 'mapping.' .. kind .. ' has no default.default'
    end
  end
  if mass_pool_exists(ns, r, kind, pool, now_ms, alive_ms) then
    return pool, nil
  end
  if from == 1 then
    from = cfg .. job
  elseif from == 2 then
    from = cfg .. 'default'
  elseif from == 3 then
    from = 'mapping.' .. kind .. '.' .. source .. '.' .. job
  elseif from == 4 then
    from = 'mapping.' .. kind .. '.default.' .. job
  else
    from = 'mapping.' .. kind .. '.default.default'
  end
  local other = kind == 'static' and 'batch' or 'static'
  if type(r[other]) == 'table' and r[other][pool] then
    return nil, kind .. ' pool ' .. pool .. ' (from ' .. from .. ') is a ' .. other .. ' pool'
  end
  return nil, kind .. ' pool ' .. pool .. ' (from ' .. from .. ') does not exist'
end

-- mass_wrong_type(keys) returns why the first of keys ({key, type} each)
-- that exists with another type (a key written by hand) cannot be used,
-- or nil: a script that looks before it pops or writes keeps what it
-- would have taken.
local function mass_wrong_type(keys)
  for _, tk in ipairs(keys) do
    local t = redis.call('TYPE', tk[1])['ok']
    if t ~= tk[2] and t ~= 'none' then
      return tk[1] .. ' is a ' .. t .. ', not a ' .. tk[2]
    end
  end
  return nil
end

-- mass_text(v) is a payload field as routing reads it: a non-empty string,
-- or an integer (PHP producers may write numeric source ids); else nil.
local function mass_text(v)
  if type(v) == 'string' and v ~= '' then
    return v
  end
  if type(v) == 'number' and v == math.floor(v) and math.abs(v) < 2 ^ 53 then
    return string.format('%d', v)
  end
  return nil
end

-- mass_fail(failures, reasons, entry, reason, now) records an entry that
-- could not be placed, with its reason (keyed by the entry's SHA-1).
local function mass_fail(failures, reasons, entry, reason, now)
  redis.call('LPUSH', failures, entry)
  redis.call('HSET', reasons, redis.sha1hex(entry), cjson.encode({reason = reason, at = tonumber(now)}))
end

-- mass_held(holders, seqs) counts the current holders in a holders hash
-- (worker id -> claim sequence): an entry is current while the worker's
-- claim sequence in seqs still equals it (a finish, requeue or recovery
-- moves or drops it). Stale entries are removed. jobpath/claim.lua has the same
-- rule for the sources it serves.
local function mass_held(holders, seqs)
  local n = 0
  local h = redis.call('HGETALL', holders)
  for i = 1, #h, 2 do
    if redis.call('HGET', seqs, h[i]) == h[i + 1] then
      n = n + 1
    else
      redis.call('HDEL', holders, h[i])
    end
  end
  return n
end
