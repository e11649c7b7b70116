-- mass_batch_commit.lua: commit a batch, as resqu-client does it: rename
-- its list to committed:<id> (refused when the list is missing, e.g.
-- expired, or the committed one exists), drop its time to live, and queue
-- its id for the allocators.
--
-- Ours on top: the queued states of the batch's unique jobs
-- (mass_batch_push.lua gave them a time to live, for an abandoned batch)
-- become permanent, as a queue job's: a committed batch may wait long in
-- a backlog, and its jobs' claims set running. A state that is gone (cleared
-- by hand) is taken again when free; one without a time to live is not
-- ours and is left alone. One command per unique job, in this step.
--
-- KEYS[1] committed (list of batch ids)
-- KEYS[2] committed:<batch_id>
-- KEYS[3] uncommitted:<batch_id>
-- KEYS[4] resque-go:batch_uids:<batch_id> (zset of the unique jobs' uids)
-- ARGV[1] batch id
-- ARGV[2] unique key prefix, "<ns>:unique:"
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
for _, uid in ipairs(redis.call('ZRANGE', KEYS[4], 0, -1)) do
  local skey = ARGV[2] .. uid .. KEY_UNIQUE_STATE_SUFFIX
  if not redis.call('SET', skey, 'queued', 'NX') and redis.call('TTL', skey) > 0 then
    redis.call('PERSIST', skey)
  end
end
redis.call('DEL', KEYS[4])
return redis.call('LPUSH', KEYS[1], ARGV[1])
