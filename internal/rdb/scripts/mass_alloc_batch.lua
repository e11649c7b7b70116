-- mass_alloc_batch.lua: allocate one committed batch (docs/massqueue.md#batch-pools). Loaded after mass_route.lua.
--
-- KEYS[1] committed (list of batch ids)
-- KEYS[2] batch:allocation_failures
-- KEYS[3] batch:allocation_reasons
-- KEYS[4] static:settings (per-source <s>:paused)
-- ARGV[1] "<ns>:"
-- ARGV[2] routing table, JSON (see mass_route.lua)
-- ARGV[3] now, Unix ms
-- ARGV[4] how long a unit stays alive after its last heartbeat, ms
-- ARGV[5] now, Unix seconds (recorded with allocation failures)
--
-- The id is popped from the tail (oldest first). Its source and job name
-- come from the id (<sourceId>:<name>:<suffix>); the pool's keys are built
-- here from ARGV[1], since the pool is only known then:
--   pool:<pool> (source -> unit), pool:<pool>:backlog:<source>,
--   pool:<pool>:unit_queues (unit list member -> batch count),
--   pool:<pool>:heartbeats (unit -> last beat, ms), pool:<pool>:<unit>:queues,
--   batch:paused:<pool> (source -> parked batch id).
-- If the source already has an active batch in the pool, the id waits in
-- the source's backlog (LPUSH); else it goes to the live unit with the
-- fewest batches (ties: lowest id, by node then number), which now holds
-- the source. A paused source's batch (<s>:paused "1") is parked instead:
-- the unit holds the source but the id goes to batch:paused:<pool>, not to
-- the unit's list, so no worker serves it until `mass resume` (the source's
-- later batches wait in its backlog as usual). A batch with a malformed
-- id, a missing list or no pool goes to batch:allocation_failures with the
-- reason, as does one whose pool's keys were written by hand with another
-- type (nothing of it is written in the pool then: the id was popped, and
-- would be lost with a script stopped half-way). With no live unit in the
-- pool the id goes back to the head of committed (other batches first).
--
-- Returns {"empty"} or {result, id, pool, unit or reason} with result
-- "assigned", "parked", "backlog", "failed" or "waiting".
local ns = ARGV[1]
-- the keys every batch may need, of another type (written by hand): an
-- error before the pop, which the allocator logs at every pass
-- (committed's own type stops the RPOP, before it takes anything)
local wrong = mass_wrong_type({{KEYS[2], 'list'}, {KEYS[3], 'hash'}, {KEYS[4], 'hash'}})
if wrong then
  return redis.error_reply(wrong .. ': no batch taken')
end
local id = redis.call('RPOP', KEYS[1])
if not id then
  return {'empty'}
end
local source, job = string.match(id, '^([^:]+):([^:]+):.+$')
if not source then
  mass_fail(KEYS[2], KEYS[3], id, 'batch id is not <sourceId>:<name>:<suffix>', ARGV[5])
  return {'failed', id, '', 'batch id is not <sourceId>:<name>:<suffix>'}
end
local list = ns .. KEY_MASS_COMMITTED_PREFIX .. id
if redis.call('EXISTS', list) == 0 then
  local why = KEY_MASS_COMMITTED_PREFIX .. id .. ' does not exist'
  mass_fail(KEYS[2], KEYS[3], id, why, ARGV[5])
  return {'failed', id, '', why}
end
-- a committed batch must not expire (the released server removes a TTL too)
redis.call('PERSIST', list)
local now_ms, alive_ms = tonumber(ARGV[3]), tonumber(ARGV[4])
local pool, why = mass_route(ns, cjson.decode(ARGV[2]), 'batch', source, job, now_ms, alive_ms)
if not pool then
  mass_fail(KEYS[2], KEYS[3], id, why, ARGV[5])
  return {'failed', id, '', why}
end
local pk = ns .. KEY_MASS_POOL_PREFIX .. pool
-- fail records the batch with the reason its pool cannot take it
local function fail(why)
  why = 'batch pool ' .. pool .. ': ' .. why
  mass_fail(KEYS[2], KEYS[3], id, why, ARGV[5])
  return {'failed', id, '', why}
end
wrong = mass_wrong_type({{pk, 'hash'}, {pk .. KEY_MASS_UNIT_QUEUES_SUFFIX, 'zset'}, {pk .. KEY_MASS_HEARTBEATS_SUFFIX, 'zset'}, {ns .. KEY_MASS_BATCH_PAUSED_PREFIX .. pool, 'hash'}})
if wrong then
  return fail(wrong)
end
local holder = redis.call('HGET', pk, source)
if holder then
  local backlog = pk .. KEY_MASS_BACKLOG_SEP .. source
  local pushed = redis.pcall('LPUSH', backlog, id)
  if type(pushed) == 'table' then
    return fail(backlog .. ': ' .. tostring(pushed.err))
  end
  return {'backlog', id, pool, holder}
end
local function parse(unit)
  local node, k = string.match(unit, '^(.*)-(%d+)$')
  return node or unit, tonumber(k) or -1
end
local function lower(a, b)
  local an, ak = parse(a)
  local bn, bk = parse(b)
  if an ~= bn then
    return an < bn
  end
  if ak ~= bk then
    return ak < bk
  end
  return a < b
end
local prefix, suffix = KEY_MASS_POOL_PREFIX .. pool .. KEY_MASS_UNIT_SEP, KEY_MASS_UNIT_SUFFIX
local best, best_load, best_member = nil, nil, nil
local loads = redis.call('ZRANGE', pk .. KEY_MASS_UNIT_QUEUES_SUFFIX, 0, -1, 'WITHSCORES')
for i = 1, #loads, 2 do
  local m, load = loads[i], tonumber(loads[i + 1])
  if string.sub(m, 1, #prefix) == prefix and string.sub(m, -#suffix) == suffix then
    local unit = string.sub(m, #prefix + 1, #m - #suffix)
    local beat = redis.call('ZSCORE', pk .. KEY_MASS_HEARTBEATS_SUFFIX, unit)
    if beat and tonumber(beat) >= now_ms - alive_ms then
      if not best or load < best_load or (load == best_load and lower(unit, best)) then
        best, best_load, best_member = unit, load, m
      end
    end
  end
end
if not best then
  redis.call('LPUSH', KEYS[1], id)
  return {'waiting', id, pool, ''}
end
if redis.call('HGET', KEYS[4], source .. ':paused') == '1' then
  redis.call('HSET', pk, source, best)
  redis.call('HSET', ns .. KEY_MASS_BATCH_PAUSED_PREFIX .. pool, source, id)
  return {'parked', id, pool, best}
end
-- the unit's list first: one of another type takes no batch
local n = redis.pcall('LPUSH', ns .. best_member, id)
if type(n) == 'table' then
  return fail(ns .. best_member .. ': ' .. tostring(n.err))
end
redis.call('HSET', pk, source, best)
redis.call('ZADD', pk .. KEY_MASS_UNIT_QUEUES_SUFFIX, n, best_member)
return {'assigned', id, pool, best}
