-- mass_batch_init.lua: the first push of a batch, as resqu-client does it:
-- refused when the batch's list already exists (another batch drew the same
-- id), so two producers never share a batch.
--
-- KEYS[1] uncommitted:<batch_id>
-- ARGV[1] the payload
--
-- The producer sets the list's time to live (EXPIRE) after this, as after
-- every push: an abandoned batch disappears.
--
-- Returns the list's length (1), or false when the key existed.
if 1 == redis.call('EXISTS', KEYS[1]) then
  return false
end
return redis.call('LPUSH', KEYS[1], ARGV[1])
