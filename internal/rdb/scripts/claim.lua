-- claim.lua: atomically take the next job for one worker slot.
--
-- KEYS[1]          pause-all-workers
-- KEYS[2]          worker:<id>
-- KEYS[3..2+n]     queue:<q_i>, in priority order
-- KEYS[3+n..2+2n]  queuestat:<host>:dequeued:<q_i>
-- KEYS[3+2n..2+3n] queuestat:<host>:queue_time:<q_i>
-- ARGV[1]          run_at (already formatted, ASCII)
-- ARGV[2]          now, Unix milliseconds
-- ARGV[3..2+n]     queue names, JSON-encoded by the caller
--
-- Returns:
--   -1                 every worker is paused (pause-all-workers is "true")
--   nil                no queue had a job
--   {0, record}        worker:<id> already held a job (an earlier claim whose
--                      reply was lost): the record is returned and kept
--   {i, payload}       popped payload from queue i (1-based); worker:<id> set
local pause = redis.call('GET', KEYS[1])
if pause and string.lower(string.match(pause, '^%s*(.-)%s*$')) == 'true' then
  return -1
end
local held = redis.call('GET', KEYS[2])
if held then
  return {0, held}
end
local n = (#KEYS - 2) / 3
for i = 1, n do
  local payload = redis.call('LPOP', KEYS[2 + i])
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
    redis.call('SET', KEYS[2], '{"queue":' .. ARGV[2 + i] .. ',"run_at":"' .. ARGV[1] .. '","payload":' .. embed .. '}')
    redis.call('INCRBY', KEYS[2 + n + i], 1)
    if decoded and type(decoded['queue_time']) == 'number' then
      local waited = math.floor(tonumber(ARGV[2]) - decoded['queue_time'] * 1000)
      if waited < 0 then waited = 0 end
      redis.call('INCRBY', KEYS[2 + 2 * n + i], waited)
    end
    return {i, payload}
  end
end
return nil
