-- mass_unit_handback.lua: hand a dead unit's batches back (docs/massqueue.md#dead-units-and-failures). Loaded after mass_route.lua.
--
-- KEYS[1] pool:<pool>:<unit>:queues
-- KEYS[2] pool:<pool>:unit_queues
-- KEYS[3] pool:<pool> (source -> unit)
-- KEYS[4] committed
-- KEYS[5] resque-go claim-sequence hash
-- KEYS[6] pool:<pool>:heartbeats
-- KEYS[7] batch:paused:<pool> (source -> parked batch id)
-- KEYS[8] resque-go:unit_turns:<pool>:<unit> (batch id -> claims in a row)
-- ARGV[1] the unit's member, pool:<pool>:<unit>:queues (no namespace)
-- ARGV[2] unit id
-- ARGV[3] "<ns>:"
-- ARGV[4] "<ns>:pool:<pool>:backlog:"
-- ARGV[5] dead before, Unix ms: the unit is dead when its last beat is
--         older (or it has none); else nothing is done
--
-- Each batch no worker holds a job of (see mass_held; keys built from the
-- ids) leaves the unit: a batch with jobs left is RPUSHed to committed (it
-- is allocated next, to a live unit) and its source released; a done one
-- is finished as mass_unit_sweep.lua does. A batch with a job still held
-- stays until that job ends or is recovered (a later call hands it back),
-- so no batch is worked by two units at once. A batch parked on the unit
-- while its source is paused (KEYS[7], with pool:<pool> naming the unit)
-- is treated the same way, and leaves the parked hash when it leaves the
-- unit: an allocator parks it again on a live unit while the source is
-- paused (mass_alloc_batch.lua). When no batch is left the
-- unit leaves the pool (its list, load entry, heartbeat and turns).
--
-- Returns {"alive"} or {"gone"|"held", handed back, finished, still held}.
local beat = redis.call('ZSCORE', KEYS[6], ARGV[2])
if beat and tonumber(beat) >= tonumber(ARGV[5]) then
  return {'alive'}
end
-- committed of another type (a key written by hand) would take no batch
-- after it left the unit: an error first, the unit's batches kept
local wrong = mass_wrong_type({{KEYS[4], 'list'}})
if wrong then
  return redis.error_reply(wrong .. ': no batch handed back')
end
local back, done, kept = 0, 0, 0
for _, id in ipairs(redis.call('LRANGE', KEYS[1], 0, -1)) do
  local holders = ARGV[3] .. KEY_MASS_BATCH_HOLDERS_PREFIX .. id
  if mass_held(holders, KEYS[5]) > 0 then
    kept = kept + 1
  else
    redis.call('LREM', KEYS[1], 0, id)
    redis.call('DEL', holders)
    redis.call('HDEL', KEYS[8], id)
    local source = string.match(id, '^([^:]+):')
    local holds = source and redis.call('HGET', KEYS[3], source) == ARGV[2]
    if holds then
      redis.call('HDEL', KEYS[3], source)
    end
    if redis.call('EXISTS', ARGV[3] .. KEY_MASS_COMMITTED_PREFIX .. id) == 1 then
      redis.call('RPUSH', KEYS[4], id)
      back = back + 1
    else
      if holds then
        local nxt = redis.call('RPOP', ARGV[4] .. source)
        if nxt then
          redis.call('RPUSH', KEYS[4], nxt)
        end
      end
      done = done + 1
    end
  end
end
local parked = redis.call('HGETALL', KEYS[7])
for i = 1, #parked, 2 do
  local source, id = parked[i], parked[i + 1]
  if redis.call('HGET', KEYS[3], source) == ARGV[2] then
    local holders = ARGV[3] .. KEY_MASS_BATCH_HOLDERS_PREFIX .. id
    if mass_held(holders, KEYS[5]) > 0 then
      kept = kept + 1
    else
      redis.call('HDEL', KEYS[7], source)
      redis.call('DEL', holders)
      redis.call('HDEL', KEYS[3], source)
      if redis.call('EXISTS', ARGV[3] .. KEY_MASS_COMMITTED_PREFIX .. id) == 1 then
        redis.call('RPUSH', KEYS[4], id)
        back = back + 1
      else
        local nxt = redis.call('RPOP', ARGV[4] .. source)
        if nxt then
          redis.call('RPUSH', KEYS[4], nxt)
        end
        done = done + 1
      end
    end
  end
end
if kept > 0 then
  redis.call('ZADD', KEYS[2], 'XX', kept, ARGV[1])
  return {'held', back, done, kept}
end
redis.call('DEL', KEYS[1], KEYS[8])
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('ZREM', KEYS[6], ARGV[2])
return {'gone', back, done, kept}
