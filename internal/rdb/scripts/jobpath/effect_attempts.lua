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
-- At the claim, its layout is the claim's (claim.lua): the attempts key
-- prefix ARGV[ao+5]. At the finish, a section of the finish's effects
-- (finish.lua), sent only when the job's counter changes:
-- KEYS[+0] <ns>:attempts:<digest>  the job's counter
-- KEYS[+1] <ns>:attempts-index     zset: counter key -> expiry, Unix s
-- ARGV[+0] tag                "a"
-- ARGV[+1] attempts           "0" deletes the counter, N > 0 sets it to N
-- ARGV[+2] ttl                the counter's time to live, seconds (its index
--                             entry expires then too)
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


-- finish_attempts writes a finished job's attempts counter (key, in the
-- index zset): "0" deletes it, N sets it to N for ttl seconds.
local function finish_attempts(key, index, attempts, ttl, now)
  if attempts == '0' then
    rcall('DEL', key)
    rcall('ZREM', index, key)
  else
    rcall('SET', key, attempts, 'EX', ttl)
    -- the index tells idle claims whether any counter exists at all
    rcall('ZADD', index, tonum(now) + tonum(ttl), key)
  end
end
