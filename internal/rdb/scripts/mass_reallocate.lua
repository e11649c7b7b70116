-- mass_reallocate.lua: give an allocation failure another try.
-- Loaded after mass_route.lua (mass_wrong_type).
--
-- KEYS[1] batch:allocation_failures
-- KEYS[2] batch:allocation_reasons
-- KEYS[3] unassigned
-- KEYS[4] committed
-- ARGV[1] the entry (exact bytes): a static payload (a JSON object) or a
--         batch id
--
-- The entry is removed and RPUSHed to the tail of unassigned or committed,
-- so the allocators take it next.
--
-- Returns 1, or 0 when the entry is not in the list (someone else took it).
-- where the entry goes, looked at before it leaves the failures: one of
-- another type (a key written by hand) keeps it there, with an error
local dest = KEYS[4]
if string.sub(ARGV[1], 1, 1) == '{' then
  dest = KEYS[3]
end
local wrong = mass_wrong_type({{dest, 'list'}})
if wrong then
  return redis.error_reply(wrong .. ': the entry stays in the allocation failures')
end
if redis.call('LREM', KEYS[1], 1, ARGV[1]) == 0 then
  return 0
end
redis.call('HDEL', KEYS[2], redis.sha1hex(ARGV[1]))
redis.call('RPUSH', dest, ARGV[1])
return 1
