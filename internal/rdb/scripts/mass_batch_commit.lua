-- mass_batch_commit.lua: commit a batch, as resqu-client does it: rename
-- its list to committed:<id> (refused when the list is missing, e.g.
-- expired, or the committed one exists), drop its time to live, and queue
-- its id for the allocators.
--
-- KEYS[1] committed (list of batch ids)
-- KEYS[2] committed:<batch_id>
-- KEYS[3] uncommitted:<batch_id>
-- ARGV[1] batch id
--
-- Returns the length of the committed list; -1 when the uncommitted list
-- does not exist, -2 when committed:<batch_id> already exists.
if redis.call('EXISTS', KEYS[2]) == 1 then
  return -2
end
if 1 ~= redis.pcall('RENAMENX', KEYS[3], KEYS[2]) then
  return -1
end
redis.call('PERSIST', KEYS[2])
return redis.call('LPUSH', KEYS[1], ARGV[1])
