-- mass_batch_push.lua: a push to an uncommitted batch that checks unique
-- jobs (docs/protocol.md#unique-jobs): a batch's first push by id (`mass batch push ID`),
-- and every push that carries a unique job or goes to a batch that holds
-- one. (A batch without unique jobs is built with LPUSH/LPUSHX as
-- resqu-client does, see mass_batch_init.lua.)
--
-- A unique job is pushed only when its uid is free: its state becomes
-- queued in the same step. The batch can be abandoned (its list expires),
-- so that state expires too, ARGV[3] seconds after the push: longer than
-- the list's time to live by a margin. KEYS[3] remembers when each uid's
-- state expires; every push here renews the states that would expire
-- before the list (ZRANGEBYSCORE: each state once per margin, not every
-- push), and the commit (mass_batch_commit.lua) makes them permanent.
--
-- KEYS[1] uncommitted:<batch_id>
-- KEYS[2] resque-go:batch_created:<batch_id> (the mark of `mass batch create`)
-- KEYS[3] resque-go:batch_uids:<batch_id>: zset uid -> when its state
--         expires, Unix seconds
-- ARGV[1] "new": a batch's first push (refused when the list or a mark
--         exists: another batch drew the same id);
--         "open": a push by id (to the list, or the first push of a batch
--         the mark reserved, which then goes: the list carries the batch);
--         "push": to the list, which must exist
-- ARGV[2] the list's time to live, seconds
-- ARGV[3] a queued state's time to live, seconds (ARGV[2] plus the margin)
-- ARGV[4] now, Unix seconds
-- ARGV[5] unique key prefix, "<ns>:unique:"
-- ARGV[6..] pairs, in push order: the job's uid ("" for a job that is not
--         unique), its payload
--
-- Returns {code, length, index, has_uids}:
--   {1, n, 0, h}   every job pushed; n is the list's length
--   {0, n, i, h}   job i (1-based) was refused: its uid is queued or
--                  running (or was pushed earlier in this call); the jobs
--                  before it are pushed, it and those after it are not
--                  (n is 0 and nothing is written when i is 1)
--   {-1, 0, 0, 0}  "new" and the list or the mark exists: nothing written
--   {-2, 0, 0, 0}  "open" or "push" and the batch is missing (expired,
--                  committed, or never created): nothing written
-- h is 1 when the batch holds unique jobs (KEYS[3] exists), else 0.
local mode = ARGV[1]
local exists = redis.call('EXISTS', KEYS[1]) == 1
if mode == 'new' and (exists or redis.call('EXISTS', KEYS[2]) == 1) then
  return {-1, 0, 0, 0}
end
if not exists and mode ~= 'new' and (mode ~= 'open' or redis.call('EXISTS', KEYS[2]) == 0) then
  return {-2, 0, 0, 0}
end
local sttl = tonumber(ARGV[3])
local expires = tonumber(ARGV[4]) + sttl
local n, refused = 0, 0
for i = 6, #ARGV, 2 do
  local uid = ARGV[i]
  if uid ~= '' then
    if not redis.call('SET', ARGV[5] .. uid .. KEY_UNIQUE_STATE_SUFFIX, 'queued', 'NX', 'EX', sttl) then
      refused = (i - 4) / 2
      break
    end
    redis.call('ZADD', KEYS[3], expires, uid)
  end
  n = redis.call('LPUSH', KEYS[1], ARGV[i + 1])
end
if n == 0 then
  return {0, 0, refused, redis.call('EXISTS', KEYS[3])}
end
if not exists and mode == 'open' then
  redis.call('DEL', KEYS[2])
end
redis.call('EXPIRE', KEYS[1], ARGV[2])
local has = redis.call('EXISTS', KEYS[3])
if has == 1 then
  -- Renew the states that would expire before the list does. A state
  -- that is gone (cleared by hand) is taken again when free: the job is
  -- queued in this batch. One without a time to live is not ours (a
  -- claim's running, a queue job's queued) and is left alone.
  local due = redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', tonumber(ARGV[4]) + tonumber(ARGV[2]))
  for _, uid in ipairs(due) do
    local skey = ARGV[5] .. uid .. KEY_UNIQUE_STATE_SUFFIX
    if not redis.call('SET', skey, 'queued', 'NX', 'EX', sttl) and redis.call('TTL', skey) > 0 then
      redis.call('EXPIRE', skey, sttl)
    end
    redis.call('ZADD', KEYS[3], expires, uid)
  end
  redis.call('EXPIRE', KEYS[3], sttl)
end
if refused > 0 then
  return {0, n, refused, has}
end
return {1, n, 0, has}
