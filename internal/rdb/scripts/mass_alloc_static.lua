-- mass_alloc_static.lua: route static payloads from unassigned to their
-- pools, each one in this step (no allocator keeps one in memory).
-- Loaded after mass_route.lua.
--
-- KEYS[1] unassigned
-- KEYS[2] resque-go mass quarantine (payloads routing cannot read)
-- KEYS[3] batch:allocation_failures
-- KEYS[4] batch:allocation_reasons
-- KEYS[5] static:settings (per-source <s>:paused)
-- ARGV[1] how many payloads to move at most
-- ARGV[2] "<ns>:"
-- ARGV[3] routing table, JSON (see mass_route.lua)
-- ARGV[4] now, Unix ms; ARGV[5] how long a registered pool stays alive, ms
-- ARGV[6] now, Unix seconds (recorded with allocation failures)
--
-- Each payload is popped from the tail (FIFO) and:
--   * has no string class, no sourceId or name (strings or integers), a
--     sourceId with ':', or is not a JSON object: moved to the quarantine,
--     from which the allocator records it in failed as a BadPayload saying
--     what is missing;
--   * has no pool (unknown, or of the wrong kind), or its source's FIFO,
--     its pool's ring or state is a key of another type (written by hand):
--     LPUSHed to batch:allocation_failures, with the reason (nothing of it
--     written in the pool);
--   * else RPUSHed to its source's FIFO in the pool,
--     <ns>static:queue:<pool>:<source>, and the source put on the pool's
--     ring (<ns>static:ring:<pool>, membership in <ns>static:state:<pool>
--     field m:<source>) unless it is there, parked, or paused; a source
--     that joins the ring with an empty FIFO gets the job in its ring
--     entry instead (<source>:<payload>, see jobpath/claim.lua): no FIFO is made
--     for it, and none deleted by its claim. These keys are built here:
--     the pool is only known after the pop.
--
-- Returns {moved, quarantined, failed}.
local ns = ARGV[2]
local r = cjson.decode(ARGV[3])
local now_ms, alive_ms = tonumber(ARGV[4]), tonumber(ARGV[5])
local moved, bad, failed = 0, 0, 0
-- what one call learns it keeps, since nothing else writes while the
-- script runs: whether any source has settings (else no pause is looked
-- for), each source's and job name's route (a pool, or {reason}), each
-- pool's keys, and the sources known to be on a pool's ring or kept off
-- it (their next jobs go to their FIFOs at once)
-- the keys every payload may need, of another type (written by hand):
-- an error before any pop, which the allocator logs at every pass
-- (unassigned's own type stops its first RPOP, before it takes anything)
local wrong = mass_wrong_type({{KEYS[2], 'list'}, {KEYS[3], 'list'}, {KEYS[4], 'hash'}, {KEYS[5], 'hash'},
  {ns .. KEY_MASS_STATIC_POOLS, 'zset'}})
if wrong then
  return redis.error_reply(wrong .. ': no payload taken')
end
local settings = redis.call('EXISTS', KEYS[5]) == 1
-- mass_push RPUSHes v to key, or returns why it could not (a key of
-- another type) instead of stopping the script with the job popped
local function mass_push(key, v)
  local r = redis.pcall('RPUSH', key, v)
  if type(r) == 'table' then
    return key .. ': ' .. tostring(r.err)
  end
  return nil
end
local routes, pools = {}, {}
for _ = 1, tonumber(ARGV[1]) do
  local payload = redis.call('RPOP', KEYS[1])
  if not payload then
    break
  end
  -- the producers' shape, {"class":"C","sourceId":"S","name":"N",...},
  -- source and name without escapes: its fields read by a pattern, at a
  -- tenth of cjson's cost (14,000 Redis instructions a payload). The class
  -- is only checked for being there, so it may have escapes (PHP's
  -- namespaces, App\\Jobs): in JSON its first quote that is not escaped
  -- ends it, and one that is would be followed by a string's text, not by
  -- ,"sourceId":". The rest of the payload is not parsed here: one that is
  -- not JSON after all fails at its worker, as a BadPayload in failed. Any
  -- other shape is decoded.
  local class, source, job = string.match(payload, '^{"class":"([^"]+)","sourceId":"([^"\\:]+)","name":"([^"\\]+)"[,}]')
  if not class or string.byte(payload, -1) ~= 125 then
    source, job, class = nil, nil, nil
    local ok, d = pcall(cjson.decode, payload)
    if ok and type(d) == 'table' then
      source, job, class = mass_text(d['sourceId']), mass_text(d['name']), d['class']
    end
  end
  if not source or not job or type(class) ~= 'string' or class == '' or string.find(source, ':', 1, true) then
    redis.call('LPUSH', KEYS[2], payload)
    bad = bad + 1
  else
    local rs = routes[source]
    if not rs then
      rs = {}
      routes[source] = rs
    end
    local pool = rs[job]
    if not pool then
      local why
      pool, why = mass_route(ns, r, 'static', source, job, now_ms, alive_ms)
      if not pool then
        pool = {why}
      end
      rs[job] = pool
    end
    if type(pool) == 'table' then
      mass_fail(KEYS[3], KEYS[4], payload, pool[1], ARGV[6])
      failed = failed + 1
    else
      local pk = pools[pool]
      if not pk then
        pk = {queue = ns .. KEY_MASS_STATIC_QUEUE_PREFIX .. pool .. KEY_MASS_STATIC_QUEUE_SEP, state = ns .. KEY_MASS_STATIC_STATE_PREFIX .. pool,
          ring = ns .. KEY_MASS_STATIC_RING_PREFIX .. pool, known = {}}
        pools[pool] = pk
        -- the pool's ring and state are looked at once: of another type
        -- (written by hand), no job is placed in the pool
        pk.bad = mass_wrong_type({{pk.ring, 'list'}, {pk.state, 'hash'}})
      end
      local fifo = pk.queue .. source
      local err = pk.bad
      if not err and pk.known[source] then
        -- this call found the FIFO to be a list or absent (below)
        redis.call('RPUSH', fifo, payload)
      elseif not err then
        if redis.call('HEXISTS', pk.state, 'm:' .. source) == 0 and
            (not settings or redis.call('HGET', KEYS[5], source .. ':paused') ~= '1') then
          if redis.call('EXISTS', fifo) == 0 then
            redis.call('RPUSH', pk.ring, source .. ':' .. payload)
          else
            -- the name first: a FIFO that takes no job takes it back off
            redis.call('RPUSH', pk.ring, source)
            err = mass_push(fifo, payload)
            if err then
              redis.call('RPOP', pk.ring)
            end
          end
          if not err then
            redis.call('HSET', pk.state, 'm:' .. source, 'r')
          end
        else
          err = mass_push(fifo, payload)
        end
        if not err then
          pk.known[source] = true
        end
      end
      if err then
        -- a key of the wrong type (written by hand): the job is recorded
        -- with the reason, to be reallocated once the key is fixed
        mass_fail(KEYS[3], KEYS[4], payload, 'static pool ' .. pool .. ': ' .. err, ARGV[6])
        failed = failed + 1
      else
        moved = moved + 1
      end
    end
  end
end
return {moved, bad, failed}
