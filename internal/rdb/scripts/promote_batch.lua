-- promote_batch.lua (after the fragment delayed_push.lua): move the first
-- n items of a due delayed bucket to their queues (or, those that cannot
-- be promoted, to failed), one by one in order, each only if it is still
-- the bucket's head, keeping the reverse index and the schedule
-- consistent, n items in one round trip.
--
-- KEYS[1]          delayed:<ts>
-- KEYS[2]          delayed_queue_schedule
-- KEYS[3]          queues
-- KEYS[4]          failed
-- KEYS[5..4+n]     item i's destination: queue:<q_i>, unassigned for a
--                  mass-queue job, failed when failing
-- KEYS[5+n..4+2n]  timestamps:<item_i>
-- KEYS[5+2n]       <ns>:resque-go:events, only while events are on: each
--                  item pushed to its queue appends its enqueued event
--                  (docs/events.md)
-- ARGV[1]          ts (the schedule member)
-- ARGV[2]          the index member, delayed:<ts> (no namespace)
-- ARGV[3+5(i-1)..] for item i: the item the caller read, the payload to
--                  push ("" records the failed entry instead), the queue
--                  name ("" for unassigned: it joins no queues set), the
--                  failed entry, the destination's kind: "queue" (RPUSH,
--                  as Resque pushes) or "unassigned" (LPUSH, as mass-queue
--                  producers push: allocators pop the other end)
-- ARGV[3+5n], ARGV[4+5n]  with the events' key: the stream's maxlen and
--                  max-age (milliseconds, "0" for none)
--
-- Returns {moved, state}: moved counts items pushed or failed; state is
-- "empty" (the bucket is empty and off the schedule), "changed" (an item
-- was no longer at the head: another mover took it; the caller reads the
-- bucket again) or "more" (all n moved, the bucket may hold more). Or
-- {moved, "wrongtype", key, type}: item moved+1's destination key (its
-- queue, unassigned, or failed) holds another type, a key written by hand; that item
-- is still at the head and nothing was done for it or after it (the
-- caller records it in failed instead, or, for failed itself, leaves the
-- bucket until the key is fixed).
local n = math.floor((#KEYS - 4) / 2)
local stream = nil
if #KEYS % 2 == 1 then
  stream = KEYS[#KEYS]
end
local moved = 0
for i = 1, n do
  local head = redis.call('LINDEX', KEYS[1], 0)
  if not head then
    redis.call('ZREM', KEYS[2], ARGV[1])
    return {moved, 'empty'}
  end
  local a = 3 + 5 * (i - 1)
  if head ~= ARGV[a] then
    return {moved, 'changed'}
  end
  -- pushed before it leaves the bucket: a destination of another type (a
  -- key written by hand) stops the call with the item still at the head,
  -- instead of losing it (push_promoted, push_failed: delayed_push.lua)
  local bad
  if ARGV[a + 1] ~= '' then
    bad = push_promoted(KEYS[4 + i], ARGV[a + 1], ARGV[a + 4])
  else
    bad = push_failed(KEYS[4], ARGV[a + 3])
  end
  if bad then
    if type(bad) == 'table' and bad[1] == 'wrongtype' then
      return {moved, 'wrongtype', bad[2], bad[3]}
    end
    return bad
  end
  redis.call('LPOP', KEYS[1])
  if ARGV[a + 1] ~= '' and ARGV[a + 2] ~= '' then
    redis.call('SADD', KEYS[3], ARGV[a + 2])
  end
  redis.call('SREM', KEYS[4 + n + i], ARGV[2])
  if stream and ARGV[a + 1] ~= '' then
    local e = 3 + 5 * n
    enqueued_event(stream, ARGV[a + 1], ARGV[a + 2], ARGV[e], ARGV[e + 1])
  end
  moved = moved + 1
end
if redis.call('LLEN', KEYS[1]) == 0 then
  redis.call('ZREM', KEYS[2], ARGV[1])
  return {moved, 'empty'}
end
return {moved, 'more'}
