-- claim.lua: atomically take the next job for one worker slot.
--
-- KEYS[1]          pause-all-workers
-- KEYS[2]          worker:<id>
-- KEYS[3]          resque-go claim-sequence hash (field: worker id)
-- KEYS[4..3+n]     queue:<q_i>, in priority order
-- KEYS[4+n..3+2n]  queuestat:<host>:dequeued:<q_i>
-- KEYS[4+2n..3+3n] queuestat:<host>:queue_time:<q_i>
-- ARGV[1]          run_at (already formatted, ASCII)
-- ARGV[2]          now, Unix milliseconds
-- ARGV[3]          job status key prefix, "<ns>:job:" (see below)
-- ARGV[4]          worker id
-- ARGV[5]          attempt counter key prefix, "<ns>:resque-go:attempts:"
-- ARGV[6..5+n]     queue names, JSON-encoded by the caller
--
-- Every claim increments the worker's claim sequence; finish.lua acts only
-- on the claim it was given, so a finish retried after a lost reply never
-- touches a job claimed since.
--
-- Job status (protocol.md 5): a job with an "id" gets its status set to
-- running here, in the same step as the claim. The key <prefix><id>:status
-- is the one key built inside this script: the id is only known after the
-- pop, and a second round trip per job would be the price of passing it in.
--
-- Attempts (protocol.AttemptsDigest): a job in Ruby's exact form
-- {"class","args"} keeps its count of failed attempts in the key
-- <prefix><sha1 of the payload>, since Ruby tools rebuild such jobs and drop
-- any count inside them; it is read here, so the worker knows the attempt
-- number without a second round trip. Built inside the script for the same
-- reason as the status key.
--
-- Returns:
--   -1                 every worker is paused (pause-all-workers is "true")
--   nil                no queue had a job
--   {0, record, seq}   worker:<id> already held a job (an earlier claim whose
--                      reply was lost): the record is returned and kept
--   {i, payload, seq, attempts}
--                      popped payload from queue i (1-based); worker:<id>
--                      set; attempts is the counter's value ("0" when
--                      absent, "" for a job not in Ruby's form)
--
-- The body is the function claim(KEYS, ARGV) so finish_claim.lua can reuse it.
local function claim(KEYS, ARGV)
  local pause = redis.call('GET', KEYS[1])
  if pause and string.lower(string.match(pause, '^%s*(.-)%s*$')) == 'true' then
    return -1
  end
  local held = redis.call('GET', KEYS[2])
  if held then
    local seq = redis.call('HGET', KEYS[3], ARGV[4])
    if not seq then
      seq = tostring(redis.call('HINCRBY', KEYS[3], ARGV[4], 1))
    end
    return {0, held, seq}
  end
  local n = (#KEYS - 3) / 3
  for i = 1, n do
    local payload = redis.call('LPOP', KEYS[3 + i])
    if payload then
      -- Embed the payload as is when it is a JSON object, else as a JSON string,
      -- so worker:<id> stays valid JSON for resque-web whatever was queued.
      local embed
      local decoded
      if string.match(payload, '^%s*{') then
        local ok, v = pcall(cjson.decode, payload)
        if ok and type(v) == 'table' then
          embed = payload
          decoded = v
        end
      end
      if not embed then
        embed = cjson.encode(payload)
      end
      redis.call('SET', KEYS[2], '{"queue":' .. ARGV[5 + i] .. ',"run_at":"' .. ARGV[1] .. '","payload":' .. embed .. '}')
      redis.call('INCRBY', KEYS[3 + n + i], 1)
      local seq = redis.call('HINCRBY', KEYS[3], ARGV[4], 1)
      if decoded and type(decoded['queue_time']) == 'number' then
        local waited = math.floor(tonumber(ARGV[2]) - decoded['queue_time'] * 1000)
        if waited < 0 then waited = 0 end
        redis.call('INCRBY', KEYS[3 + 2 * n + i], waited)
      end
      if decoded and (type(decoded['id']) == 'string' or type(decoded['id']) == 'number') then
        local now = math.floor(tonumber(ARGV[2]) / 1000)
        local skey = ARGV[3] .. tostring(decoded['id']) .. ':status'
        if decoded['isMonitored'] == true then
          -- resque-v3 string statuses
          redis.call('SET', skey, '{"status":"running","updated":' .. now .. '}', 'EX', 86400)
        else
          -- php-resque integer statuses, only when the producer asked for tracking
          local cur = redis.call('GET', skey)
          if cur then
            local ok, st = pcall(cjson.decode, cur)
            if ok and type(st) == 'table' and type(st['status']) == 'number' then
              st['status'] = 2
              st['updated'] = now
              redis.call('SET', skey, cjson.encode(st), 'KEEPTTL')
            end
          end
        end
      end
      local attempts = ''
      if decoded and decoded['class'] ~= nil and decoded['args'] ~= nil then
        local n = 0
        for _ in pairs(decoded) do n = n + 1 end
        if n == 2 then
          attempts = redis.call('GET', ARGV[5] .. redis.sha1hex(payload)) or '0'
        end
      end
      return {i, payload, tostring(seq), attempts}
    end
  end
  return nil
end

return claim(KEYS, ARGV)
