-- mass_fail_bad.lua: record a quarantined static payload in failed.
-- Loaded after mass_route.lua (mass_wrong_type).
--
-- KEYS[1] resque-go mass quarantine
-- KEYS[2] failed
-- ARGV[1] the payload (exact bytes)
-- ARGV[2] the failed entry (a ResqueGo::BadPayload saying what is missing)
--
-- Returns 1, or 0 when the payload is no longer quarantined (another
-- allocator recorded it).
-- failed of another type (a key written by hand) keeps the payload in
-- the quarantine, with an error
local wrong = mass_wrong_type({{KEYS[2], 'list'}})
if wrong then
  return redis.error_reply(wrong .. ': the payload stays in the quarantine')
end
if redis.call('LREM', KEYS[1], 1, ARGV[1]) == 0 then
  return 0
end
redis.call('RPUSH', KEYS[2], ARGV[2])
return 1
