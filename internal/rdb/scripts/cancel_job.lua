-- cancel_job.lua: ask for the job a worker slot is running now to be
-- cancelled, naming that claim exactly (its claim sequence), so that the
-- request can never reach the slot's next job. The request is stored (a
-- worker whose subscription was down reads it when it reconnects) and
-- published (a subscribed worker acts at once), in one step with the read
-- of the claim it names.
--
-- KEYS[1] <ns>:worker:<id>                 the slot's record (held while a job runs)
-- KEYS[2] <ns>:resque-go:claim_seq         hash: worker id -> claim sequence
-- KEYS[3] <ns>:resque-go:cancel:<id>       the stored request
-- ARGV[1] worker id
-- ARGV[2] "0" or "1": let the retry policy apply
-- ARGV[3] time to live of the stored request, seconds
-- ARGV[4] the channel (<ns>:resque-go:cancel)
-- ARGV[5] the record the caller saw, or "": cancel only while it is still
--         the slot's record (a cancel by job id)
--
-- Returns {"ok", seq} when the request was stored and published, {"idle"}
-- when the slot runs no job (or, with ARGV[5], no longer that one), or
-- {"foreign"} when the record was not written by a resque-go claim (a
-- Ruby or PHP worker: no claim sequence).
local rec = redis.call('GET', KEYS[1])
if not rec or (ARGV[5] ~= '' and rec ~= ARGV[5]) then
  return {'idle'}
end
local seq = redis.call('HGET', KEYS[2], ARGV[1])
if not seq then
  return {'foreign'}
end
redis.call('SET', KEYS[3], seq .. ' ' .. ARGV[2], 'EX', ARGV[3])
redis.call('PUBLISH', ARGV[4], seq .. ' ' .. ARGV[2] .. ' ' .. ARGV[1])
return {'ok', seq}
