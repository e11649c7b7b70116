-- claim.lua: atomically take the next job for one worker slot.
--
-- KEYS[1]        pause-all-workers
-- KEYS[2]        worker:<id>
-- KEYS[3]        resque-go claim-sequence hash (field: worker id)
-- KEYS[4]        resque-go attempts index (zset of the counters that exist)
-- KEYS[5..4+n]   the sources' lists (queue:<q_i>, or another list of
--                payloads), in priority order
-- KEYS[5+n..4+2n] each source's serial lock, queuedata:<q_i>:lock (any key
--                for a source that is not serial)
-- ARGV[1]        run_at (already formatted, ASCII; unused, kept for the layout)
-- ARGV[2]        now, Unix seconds
-- ARGV[3]        job status key prefix, "<ns>:job:" (see below)
-- ARGV[4]        worker id
-- ARGV[5]        attempt counter key prefix, "<ns>:resque-go:attempts:"
-- ARGV[6..5+n]   the start of each source's worker record, up to its
--                payload: {"queue":"<q>","run_at":"<time>","payload":
-- ARGV[6+n..5+2n] the end of each source's record: "}" for a queue (Ruby's
--                record), or ,"source":"<list>"}
-- ARGV[6+2n..5+3n] "1" for a serial source, "" for any other
-- ARGV[6+3n]     the slot's lock token (32 hex)
-- ARGV[7+3n]     the lock's time to live, milliseconds
-- ARGV[8+3n]     unique key prefix, "<ns>:unique:"
--                (the caller builds the record around the payload: a
--                concatenation of seven pieces here cost Redis ~7 us a job)
--
-- Every claim gets a new claim sequence; finish.lua acts only on the claim
-- it was given, so a finish retried after a lost reply never touches a job
-- claimed since. The dequeue and queue-time counters (queuestat:*) are the
-- worker's to batch; nothing here decodes the payload unless it may name a
-- job status to update.
--
-- worker:<id> embeds the payload as is when it looks like a JSON object
-- (starts with "{", ends with "}"), else as a JSON string; the worker checks
-- the payload it got and rewrites the record in the rare case it was not
-- valid JSON after all, so resque-web always finds valid JSON there.
--
-- Job status (protocol.md 5): a job with a top-level "id" gets its status set
-- to running here, in the same step as the claim. The key <prefix><id>:status
-- is built inside this script: the id is only known after the pop, and a
-- second round trip per job would be the price of passing it in.
--
-- Serial sources (protocol.md 9): a source whose lock another slot holds is
-- skipped (the next source is tried); a job popped from a serial source
-- takes the lock (SET PX, the slot's token) in the same step, and finish.lua
-- releases it. A source that is not serial costs no command.
--
-- Unique jobs (protocol.md 8): a job whose payload has "unique":{"uid":U}
-- sets <prefix>U:state to running in the same step (built here, like the
-- status key: the uid is only known after the pop). Any other job costs one
-- string.find.
--
-- Attempts (protocol.AttemptsDigest): a job in Ruby's exact form
-- {"class","args"} keeps its count of failed attempts in the key
-- <prefix><sha1 of the payload>, since Ruby tools rebuild such jobs and drop
-- any count inside them; it is read here (built inside the script for the
-- same reason as the status key), so the worker knows the attempt number
-- without a second round trip. Only while the attempts index is not empty:
-- usually no job is being retried and the claim costs one EXISTS instead.
--
-- Returns:
--   -1                 every worker is paused (pause-all-workers is "true")
--   nil                no queue had a job
--   {0, record, seq}   worker:<id> already held a job (an earlier claim whose
--                      reply was lost): the record is returned and kept
--                      (seq, here and below, is a string or an integer:
--                      numbers are not formatted in Lua, which costs a
--                      printf per job)
--   {i, payload, seq, attempts}
--                      popped payload from source i (1-based); worker:<id>
--                      set; attempts is the counter's value: "0" when
--                      absent (or no counter exists at all), "" when not
--                      looked for (a job not in Ruby's compact form, while
--                      some counter exists: the worker reads it if the job
--                      is in Ruby's form written otherwise, with spaces or
--                      args first)
--
-- The body is the function claim(KEYS, ARGV, seq, ko, ao) so
-- finish_claim.lua can reuse it: its keys and arguments start after the
-- first ko keys and ao arguments (none when run alone), and seq, when given, is the
-- sequence finish.lua just moved to (the slot's record is then known to be
-- gone, and the claim takes that number).
local function claim(KEYS, ARGV, seq, ko, ao)
  ko, ao = ko or 0, ao or 0
  local pause = redis.call('GET', KEYS[ko + 1])
  if pause and string.lower(string.match(pause, '^%s*(.-)%s*$')) == 'true' then
    return -1
  end
  if not seq then
    local held = redis.call('GET', KEYS[ko + 2])
    if held then
      local cur = redis.call('HGET', KEYS[ko + 3], ARGV[ao + 4])
      if not cur then
        cur = redis.call('HINCRBY', KEYS[ko + 3], ARGV[ao + 4], '1')
      end
      return {0, held, cur}
    end
  end
  local n = (#KEYS - ko - 4) / 2
  local token = ARGV[ao + 6 + 3 * n]
  for i = 1, n do
    local serial = ARGV[ao + 5 + 2 * n + i] == '1'
    local payload = nil
    if serial then
      local holder = redis.call('GET', KEYS[ko + 4 + n + i])
      if not holder or holder == token then
        payload = redis.call('LPOP', KEYS[ko + 4 + i])
        if payload then
          redis.call('SET', KEYS[ko + 4 + n + i], token, 'PX', ARGV[ao + 7 + 3 * n])
        end
      end
    else
      payload = redis.call('LPOP', KEYS[ko + 4 + i])
    end
    if payload then
      local object = string.byte(payload, 1) == 123 and string.byte(payload, -1) == 125
      local embed = payload
      if not object then
        embed = cjson.encode(payload)
      end
      redis.call('SET', KEYS[ko + 2], ARGV[ao + 5 + i] .. embed .. ARGV[ao + 5 + n + i])
      if not seq then
        seq = redis.call('HINCRBY', KEYS[ko + 3], ARGV[ao + 4], '1')
      end
      local decoded = nil
      if object and string.find(payload, '"unique"', 1, true) then
        local ok, d = pcall(cjson.decode, payload)
        if ok and type(d) == 'table' then
          decoded = d
          local u = d['unique']
          local uid = type(u) == 'table' and u['uid']
          if type(uid) == 'number' then
            -- the literal text, as the worker reads it (tostring rounds)
            uid = string.match(payload, '"uid"%s*:%s*(-?[%d%.eE+-]+)')
          end
          if type(uid) == 'string' and uid ~= '' then
            redis.call('SET', ARGV[ao + 8 + 3 * n] .. uid .. ':state', 'running')
          end
        end
      end
      if object and string.find(payload, '"id"', 1, true) then
        if not decoded then
          local ok, d = pcall(cjson.decode, payload)
          decoded = ok and d
        end
        local id = type(decoded) == 'table' and decoded['id']
        if type(id) == 'string' or type(id) == 'number' then
          local skey = ARGV[ao + 3] .. tostring(id) .. ':status'
          if decoded['isMonitored'] == true then
            -- resque-v3 string statuses
            redis.call('SET', skey, '{"status":"running","updated":' .. ARGV[ao + 2] .. '}', 'EX', 86400)
          else
            -- php-resque integer statuses, only when the producer asked for tracking
            local cur = redis.call('GET', skey)
            if cur then
              local sok, st = pcall(cjson.decode, cur)
              if sok and type(st) == 'table' and type(st['status']) == 'number' then
                st['status'] = 2
                st['updated'] = tonumber(ARGV[ao + 2])
                redis.call('SET', skey, cjson.encode(st), 'KEEPTTL')
              end
            end
          end
        end
      end
      local attempts = '0'
      if redis.call('EXISTS', KEYS[ko + 4]) == 1 then
        if object and string.find(payload, '^{"class":"[^"]*","args":') then
          -- compact Ruby form: the counter is keyed by the payload's bytes
          attempts = redis.call('GET', ARGV[ao + 5] .. redis.sha1hex(payload)) or '0'
        else
          attempts = '' -- not looked for: the worker reads it if it needs it
        end
      end
      return {i, payload, seq, attempts}
    end
  end
  return nil
end

return claim(KEYS, ARGV)
