-- mass_batch_pause.lua: park a paused source's active batch in one batch
-- pool (`mass pause`), so the unit's workers stop serving it.
--
-- KEYS[1] pool:<pool> (source -> unit)
-- KEYS[2] batch:paused:<pool> (source -> parked batch id)
-- KEYS[3] pool:<pool>:unit_queues (unit list member -> batch count)
-- KEYS[4] static:settings (per-source <s>:paused)
-- ARGV[1] source id
-- ARGV[2] "<ns>:"
-- ARGV[3] "pool:<pool>:": the unit's list is <ns>pool:<pool>:<unit>:queues,
--         built here since the unit is only known from KEYS[1]
--
-- The source's batch on the unit pool:<pool> names (the id that starts
-- with "<source>:"; a source has one active batch per pool) is removed
-- from the unit's list and recorded in KEYS[2]; pool:<pool> keeps the
-- unit, so the source's later batches still wait in its backlog. Its
-- running jobs finish normally; a retried or recovered one goes back to
-- committed:<id>, which waits with the rest. Nothing is done unless the
-- source is paused (KEYS[4]): a resume that ran since wins.
--
-- Returns {"parked", id, unit}, {"already", id, unit} (parked before),
-- {"none"} (no active batch here) or {"resumed"} (not paused).
local source = ARGV[1]
if redis.call('HGET', KEYS[4], source .. ':paused') ~= '1' then
  return {'resumed'}
end
local unit = redis.call('HGET', KEYS[1], source)
if not unit then
  return {'none'}
end
local id = redis.call('HGET', KEYS[2], source)
if id then
  return {'already', id, unit}
end
local member = ARGV[3] .. unit .. KEY_MASS_UNIT_SUFFIX
local list = ARGV[2] .. member
local prefix = source .. ':'
for _, b in ipairs(redis.call('LRANGE', list, 0, -1)) do
  if string.sub(b, 1, #prefix) == prefix then
    id = b
    break
  end
end
if not id then
  return {'none'}
end
redis.call('LREM', list, 0, id)
redis.call('HSET', KEYS[2], source, id)
redis.call('ZADD', KEYS[3], 'XX', redis.call('LLEN', list), member)
return {'parked', id, unit}
