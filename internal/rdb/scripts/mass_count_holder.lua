-- mass_count_holder.lua: record a worker that already runs a job of a
-- static source in the source's holders hash (static:holders:<pool>:<s>),
-- when a limit is set on the source: claims made before the limit did not
-- record themselves, and the limit must count them.
--
-- KEYS[1] worker:<id>
-- KEYS[2] resque-go claim-sequence hash
-- KEYS[3] static:holders:<pool>:<source>
-- ARGV[1] the worker record the caller read (its job is the source's)
-- ARGV[2] worker id
--
-- Only while the record is still the one read: the entry gets the worker's
-- current claim sequence, so it counts until that claim ends (finish,
-- requeue or recovery move the sequence on). Returns 1 when recorded.
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return 0
end
local seq = redis.call('HGET', KEYS[2], ARGV[2])
if not seq then
  return 0
end
redis.call('HSET', KEYS[3], ARGV[2], seq)
return 1
