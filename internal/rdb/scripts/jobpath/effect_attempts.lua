-- jobpath/effect_attempts.lua: a job's count of failed attempts, read at
-- the claim (job_attempts) and written at the finish (finish_attempts).
--
-- Attempts (protocol.AttemptsDigest): a job in Ruby's exact form
-- {"class","args"} keeps its count of failed attempts in the key
-- <prefix><sha1 of the payload>, since Ruby tools rebuild such jobs and drop
-- any count inside them; it is read here (built inside the script for the
-- same reason as the status key), so the worker knows the attempt number
-- without a second round trip. Only while the attempts index is not empty:
-- usually no job is being retried and the claim costs one EXISTS instead.
--
-- Layout: the claim's (claim.lua), attempts key prefix ARGV[ao+5]; the
-- finish's (finish.lua), KEYS[+7], KEYS[+8], ARGV[+5], ARGV[+9], ARGV[+10].
-- job_attempts reads a claimed job's attempts counter while some counter
-- exists (see Attempts in the header): its value, "0", or "" when not
-- looked for.
local function job_attempts(payload, object, ARGV, ao)
  if object and sfind(payload, '^{"class":"[^"]*","args":') then
    -- compact Ruby form: the counter is keyed by the payload's bytes
    return rcall('GET', ARGV[ao + 5] .. redis.sha1hex(payload)) or '0'
  end
  return '' -- not looked for: the worker reads it if it needs it
end


-- finish_attempts writes a finished job's attempts counter (finish.lua's
-- KEYS[+7], its index KEYS[+8]): ARGV[+9] "" leaves it, "0" deletes it, N
-- sets it to N for ARGV[+10] seconds.
local function finish_attempts(KEYS, ARGV, ko, ao)
  if ARGV[ao + 9] == '0' then
    rcall('DEL', KEYS[ko + 7])
    rcall('ZREM', KEYS[ko + 8], KEYS[ko + 7])
  elseif ARGV[ao + 9] ~= '' then
    rcall('SET', KEYS[ko + 7], ARGV[ao + 9], 'EX', ARGV[ao + 10])
    -- the index tells idle claims whether any counter exists at all
    rcall('ZADD', KEYS[ko + 8], tonum(ARGV[ao + 5]) + tonum(ARGV[ao + 10]), KEYS[ko + 7])
  end
end
