-- jobpath/finish_delayed.lua: a retried or rescheduled job that goes
-- back through resque-scheduler's delayed queue: its item pushed to
-- delayed:<due>, the bucket filed in the item's timestamps:<item> and in
-- delayed_queue_schedule (docs/protocol.md#delayed-jobs).
--
-- Layout, a section of the finish's effects (finish.lua), sent only for a
-- retry or reschedule whose due time is ahead:
-- KEYS[+0] <ns>:delayed:<ts>            the bucket
-- KEYS[+1] <ns>:timestamps:<item>       the item's buckets
-- KEYS[+2] <ns>:delayed_queue_schedule
-- ARGV[+0] tag                     "d"
-- ARGV[+1] delayed-member          the bucket as the timestamps set names it, delayed:<ts>
--
-- finish_delayed pushes item (noting the push in undo, finish_push's) and
-- files its bucket due.
local function finish_delayed(bucket, timestamps, schedule, item, due, member, undo)
  rcall('RPUSH', bucket, item)
  undo[#undo + 1] = bucket
  rcall('SADD', timestamps, member)
  rcall('ZADD', schedule, due, due)
end
