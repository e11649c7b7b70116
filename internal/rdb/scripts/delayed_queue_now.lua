-- delayed_queue_now.lua (after the fragment delayed_push.lua): move one
-- delayed item, found by its exact bytes in bucket delayed:<ts>, to its
-- queue at once (resque-web's "Queue now"), in one step: it is pushed to its destination as promote_batch.lua pushes
-- it and one copy leaves the bucket, so it is never both queued and left
-- delayed, and a mover that promotes the bucket meanwhile finds it gone
-- (promote_batch.lua moves only the head it read), so it is never queued
-- twice. Its index entry goes when no copy is left in the bucket, and the
-- bucket leaves the schedule when it is left empty.
--
-- KEYS[1]  delayed:<ts>
-- KEYS[2]  delayed_queue_schedule
-- KEYS[3]  queues
-- KEYS[4]  the destination: queue:<q>, or unassigned for a mass-queue job
-- KEYS[5]  timestamps:<item>
-- KEYS[6]  <ns>:resque-go:events, only while events are on: the push
--          appends its enqueued event (docs/events.md)
-- ARGV[1]  ts (the schedule member)
-- ARGV[2]  the index member, delayed:<ts> (no namespace)
-- ARGV[3]  the item
-- ARGV[4]  the payload to push
-- ARGV[5]  the queue name ("" for unassigned: it joins no queues set)
-- ARGV[6]  the destination's kind: "queue" (RPUSH, as Resque pushes) or
--          "unassigned" (LPUSH, as mass-queue producers push)
-- ARGV[7], ARGV[8]  with the events' key: the stream's maxlen and max-age
--          (milliseconds, "0" for none)
--
-- Returns {"queued", left, unscheduled}: left is the number of items left
-- in the bucket, unscheduled 1 when the bucket left the schedule; or
-- {"absent"}: the item is not in the bucket (promoted or removed
-- meanwhile), nothing done; or {"wrongtype", key, type}: the destination
-- holds another type (a key written by hand), nothing done.
local bucket, schedule, dest = KEYS[1], KEYS[2], KEYS[4]
local item, payload = ARGV[3], ARGV[4]
if not redis.call('LPOS', bucket, item) then
  return {'absent'}
end
-- pushed before it leaves the bucket, as a mover pushes it
-- (push_promoted: delayed_push.lua)
local bad = push_promoted(dest, payload, ARGV[6])
if bad then
  return bad
end
redis.call('LREM', bucket, 1, item)
if ARGV[6] ~= 'unassigned' and ARGV[5] ~= '' then
  redis.call('SADD', KEYS[3], ARGV[5])
end
if not redis.call('LPOS', bucket, item) then
  redis.call('SREM', KEYS[5], ARGV[2])
end
if KEYS[6] then
  enqueued_event(KEYS[6], payload, ARGV[5], ARGV[7], ARGV[8])
end
local left = redis.call('LLEN', bucket)
local unscheduled = 0
if left == 0 then
  unscheduled = redis.call('ZREM', schedule, ARGV[1])
end
return {'queued', left, unscheduled}
