-- enqueue_tracked.lua: push a job with tags, or with its enqueued event,
-- in one step: the job, its tags' indexes and its event are all written
-- or none is (docs/events.md). A job with neither goes the plain way
-- (RPUSH and SADD, as every Resque producer).
--
-- KEYS[1]        <ns>:queue:<q>
-- KEYS[2]        <ns>:queues
-- KEYS[3..2+t]   <ns>:resque-go:tag:<t_i>, one for each tag
-- KEYS[3+t]      <ns>:resque-go:events, only when the event is written
-- ARGV[1]        q, the queue's name
-- ARGV[2]        the payload
-- ARGV[3]        the job's id (the indexes' member)
-- ARGV[4]        the job's class
-- ARGV[5]        now, Unix milliseconds (the indexes' score)
-- ARGV[6]        t, how many tags
-- ARGV[7]        how many ids one tag's index keeps
-- ARGV[8]        the stream's maxlen ("" writes no event)
-- ARGV[9]        the stream's max age, milliseconds ("0": none)
--
-- Returns the queue's length.
local t = tonumber(ARGV[6])
local n = redis.call('RPUSH', KEYS[1], ARGV[2])
redis.call('SADD', KEYS[2], ARGV[1])
for i = 1, t do
  local key = KEYS[2 + i]
  redis.call('ZADD', key, ARGV[5], ARGV[3])
  -- the oldest ids go once the index is full
  redis.call('ZREMRANGEBYRANK', key, 0, -tonumber(ARGV[7]) - 1)
end
if ARGV[8] ~= '' then
  local stream = KEYS[3 + t]
  redis.call('XADD', stream, 'MAXLEN', '~', ARGV[8], '*', 'event', 'enqueued', 'id', ARGV[3],
    'class', ARGV[4], 'queue', ARGV[1], 'worker', '', 'attempt', '0', 'duration_ms', '0')
  if ARGV[9] ~= '0' then
    redis.call('XTRIM', stream, 'MINID', '~', tostring(tonumber(ARGV[5]) - tonumber(ARGV[9])))
  end
end
return n
