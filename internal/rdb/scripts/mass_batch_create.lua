-- mass_batch_create.lua: reserve a batch id for `mass batch create`, whose
-- jobs come in later calls.
--
-- KEYS[1] uncommitted:<batch_id>
-- KEYS[2] resque-go:batch_created:<batch_id>
-- ARGV[1] time to live, seconds
--
-- Returns 1, or false when the id is taken (its list or its mark exists).
if redis.call('EXISTS', KEYS[1], KEYS[2]) > 0 then
  return false
end
redis.call('SET', KEYS[2], '1', 'EX', ARGV[1])
return 1
