-- mass_resume.lua: put a source back on a static pool's ring after a pause
-- (or after its settings changed), unless it is there or parked.
--
-- KEYS[1] static:ring:<pool>
-- KEYS[2] static:state:<pool>
-- KEYS[3] static:queue:<pool>:<source> (its FIFO)
-- KEYS[4] static:holders:<pool>:<source>
-- KEYS[5] static:settings
-- ARGV[1] source id
--
-- The source goes back when it has jobs queued or held (a held job may come
-- back to its FIFO) and is not paused.
--
-- Returns 1 when it went back, else 0.
if redis.call('HGET', KEYS[5], ARGV[1] .. ':paused') == '1' or redis.call('HEXISTS', KEYS[2], 'm:' .. ARGV[1]) == 1 then
  return 0
end
if redis.call('LLEN', KEYS[3]) == 0 and redis.call('HLEN', KEYS[4]) == 0 then
  return 0
end
redis.call('RPUSH', KEYS[1], ARGV[1])
redis.call('HSET', KEYS[2], 'm:' .. ARGV[1], 'r')
return 1
