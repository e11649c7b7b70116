-- mass_unit_sweep.lua: finish the done batches of one unit (docs/massqueue.md#batch-pools). Loaded after mass_route.lua.
--
-- KEYS[1] pool:<pool>:<unit>:queues (the unit's batch ids)
-- KEYS[2] pool:<pool>:unit_queues
-- KEYS[3] pool:<pool> (source -> unit)
-- KEYS[4] committed
-- KEYS[5] resque-go claim-sequence hash
-- KEYS[6] batch:paused:<pool> (source -> parked batch id)
-- KEYS[7] resque-go:unit_turns:<pool>:<unit> (batch id -> claims in a row)
-- ARGV[1] the unit's member, pool:<pool>:<unit>:queues (no namespace)
-- ARGV[2] unit id
-- ARGV[3] "<ns>:"
-- ARGV[4] "<ns>:pool:<pool>:backlog:"
--
-- A batch is done when committed:<id> is gone (empty) and no worker holds
-- one of its jobs (<ns>batch:holders:<id> has no current entry: see
-- mass_held); its keys are built here from the ids in KEYS[1]. A done
-- batch is removed from the unit, the unit's count set to what is left,
-- the source released from pool:<pool> (when this unit holds it), and the
-- source's oldest backlog batch RPUSHed to committed: it is allocated next.
-- A batch parked on this unit while its source is paused (KEYS[6], with
-- pool:<pool> naming this unit) is finished the same way when done (its
-- list emptied by the jobs running at the pause, or removed); the next
-- backlog batch is then allocated and parked, the source being paused.
--
-- Returns the ids finished.
local done = {}
local ids = redis.call('LRANGE', KEYS[1], 0, -1)
for _, id in ipairs(ids) do
  local holders = ARGV[3] .. KEY_MASS_BATCH_HOLDERS_PREFIX .. id
  if redis.call('EXISTS', ARGV[3] .. KEY_MASS_COMMITTED_PREFIX .. id) == 0 and mass_held(holders, KEYS[5]) == 0 then
    redis.call('LREM', KEYS[1], 0, id)
    redis.call('DEL', holders)
    redis.call('HDEL', KEYS[7], id)
    local source = string.match(id, '^([^:]+):')
    if source and redis.call('HGET', KEYS[3], source) == ARGV[2] then
      redis.call('HDEL', KEYS[3], source)
      local nxt = redis.call('RPOP', ARGV[4] .. source)
      if nxt then
        redis.call('RPUSH', KEYS[4], nxt)
      end
    end
    done[#done + 1] = id
  end
end
local parked = redis.call('HGETALL', KEYS[6])
for i = 1, #parked, 2 do
  local source, id = parked[i], parked[i + 1]
  local holders = ARGV[3] .. KEY_MASS_BATCH_HOLDERS_PREFIX .. id
  if redis.call('HGET', KEYS[3], source) == ARGV[2] and redis.call('EXISTS', ARGV[3] .. KEY_MASS_COMMITTED_PREFIX .. id) == 0 and
      mass_held(holders, KEYS[5]) == 0 then
    redis.call('HDEL', KEYS[6], source)
    redis.call('DEL', holders)
    redis.call('HDEL', KEYS[3], source)
    local nxt = redis.call('RPOP', ARGV[4] .. source)
    if nxt then
      redis.call('RPUSH', KEYS[4], nxt)
    end
    done[#done + 1] = id
  end
end
if #done > 0 then
  redis.call('ZADD', KEYS[2], 'XX', redis.call('LLEN', KEYS[1]), ARGV[1])
end
return done
