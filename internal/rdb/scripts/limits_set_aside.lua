-- limits_set_aside.lua: take an entry that is not a job's (written by
-- hand) off a cap's parked list or a rate's waiting list, where the
-- limits sweep found it, with the record of why in failed: the entry
-- never leaves without it.
--
-- KEYS[1]  the parked or waiting list
-- KEYS[2]  failed
-- ARGV[1]  the entry
-- ARGV[2]  the failed entry (a ResqueGo::BadPayload naming the list)
--
-- Returns 1 (set aside) or 0 (the entry is no longer on the list). An
-- error reply, with nothing done, when failed or the list is a key of
-- another type.
local t = redis.call('TYPE', KEYS[2])['ok']
if t ~= 'list' and t ~= 'none' then
  return redis.error_reply(KEYS[2] .. ' holds a ' .. t .. ', not a list: the entry stays on ' .. KEYS[1])
end
local r = redis.pcall('LREM', KEYS[1], -1, ARGV[1])
if type(r) == 'table' and r.err then
  return r
end
if r == 0 then
  return 0
end
redis.call('RPUSH', KEYS[2], ARGV[2])
return 1
