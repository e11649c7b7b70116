-- mass_batch_resume.lua: put a resumed source's parked batch back to work
-- in one batch pool (`mass resume`). Loaded after mass_route.lua.
--
-- KEYS[1] pool:<pool> (source -> unit)
-- KEYS[2] batch:paused:<pool> (source -> parked batch id)
-- KEYS[3] pool:<pool>:unit_queues (unit list member -> batch count)
-- KEYS[4] pool:<pool>:heartbeats (unit -> last beat, Unix ms)
-- KEYS[5] committed
-- KEYS[6] resque-go claim-sequence hash
-- KEYS[7] static:settings (per-source <s>:paused)
-- ARGV[1] source id
-- ARGV[2] "<ns>:"
-- ARGV[3] "pool:<pool>:": a unit's list is <ns>pool:<pool>:<unit>:queues
-- ARGV[4] "<ns>:pool:<pool>:backlog:"
-- ARGV[5] alive since, Unix ms: a unit whose last beat is older is dead
--
-- The parked batch leaves KEYS[2] and:
--   * goes back on its unit's list (LPUSH, as an allocation does) when the
--     unit is alive and in the pool, or is still in the pool and a worker
--     holds one of the batch's jobs (see mass_held; keys built from the
--     id): a dead unit's batches are then handed back by
--     mass_unit_handback.lua once nothing is held, so no batch is worked
--     by two units at once;
--   * else leaves the unit as mass_unit_handback.lua does: the source is
--     released from pool:<pool> and the id RPUSHed to committed (allocated
--     next, to a live unit), or, when its list is gone (the batch is
--     done), it is finished and the source's oldest backlog batch goes to
--     committed instead.
-- Nothing is done while the source is paused (KEYS[7]): a pause that ran
-- since wins.
--
-- Returns {"unit", id, unit}, {"committed", id, unit}, {"finished", id,
-- unit}, {"none"} (nothing parked here) or {"paused", id}.
local source = ARGV[1]
local id = redis.call('HGET', KEYS[2], source)
if not id then
  return {'none'}
end
if redis.call('HGET', KEYS[7], source .. ':paused') == '1' then
  return {'paused', id}
end
redis.call('HDEL', KEYS[2], source)
local unit = redis.call('HGET', KEYS[1], source)
local holders = ARGV[2] .. KEY_MASS_BATCH_HOLDERS_PREFIX .. id
local held = mass_held(holders, KEYS[6])
if unit then
  local member = ARGV[3] .. unit .. KEY_MASS_UNIT_SUFFIX
  if redis.call('ZSCORE', KEYS[3], member) then
    local beat = redis.call('ZSCORE', KEYS[4], unit)
    if (beat and tonumber(beat) >= tonumber(ARGV[5])) or held > 0 then
      local n = redis.call('LPUSH', ARGV[2] .. member, id)
      redis.call('ZADD', KEYS[3], 'XX', n, member)
      return {'unit', id, unit}
    end
  end
  redis.call('HDEL', KEYS[1], source)
else
  unit = ''
end
if held == 0 then
  redis.call('DEL', holders)
end
if redis.call('EXISTS', ARGV[2] .. KEY_MASS_COMMITTED_PREFIX .. id) == 1 then
  redis.call('RPUSH', KEYS[5], id)
  return {'committed', id, unit}
end
local nxt = redis.call('RPOP', ARGV[4] .. source)
if nxt then
  redis.call('RPUSH', KEYS[5], nxt)
end
return {'finished', id, unit}
