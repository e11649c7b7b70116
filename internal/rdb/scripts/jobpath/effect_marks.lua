-- jobpath/effect_marks.lua: the effects of a claim on what the job's
-- payload names: its job status set to running, and its unique state.
-- The finish's side: effect_status.lua, effect_unique.lua.
--
-- Layout: the claim's (claim.lua): the status key prefix ARGV[ao+3], now
-- ARGV[ao+2], and the unique key prefix at ARGV[ui].
--
-- Job status (docs/protocol.md#job-status): a job with a top-level "id" gets its status set
-- to running here, in the same step as the claim. The key <prefix><id>:status
-- is built inside this script: the id is only known after the pop, and a
-- second round trip per job would be the price of passing it in.
--
-- Unique jobs (docs/protocol.md#unique-jobs): a job whose payload has "unique":{"uid":U}
-- sets <prefix>U:state to running in the same step (built here, like the
-- status key: the uid is only known after the pop). Any other job costs one
-- string.find.
--
-- job_marks writes what a claimed job's payload asks for (u and d say
-- whether it mentions "unique" and "id"): a unique job's state becomes
-- running; a job with a status key gets its status set to running (see the
-- header). claim.lua's arguments start after ao (now at ao + 2, the status
-- key prefix at ao + 3); ui is the index of the unique key prefix.
local function job_marks(payload, u, d, ARGV, ao, ui)
  local decoded = nil
  if u then
    local ok, dec = pcall(cjson.decode, payload)
    if ok and type(dec) == 'table' then
      decoded = dec
      local un = dec['unique']
      local uid = type(un) == 'table' and un['uid']
      if type(uid) == 'number' then
        -- the literal text, as the worker reads it (tostring rounds)
        uid = string.match(payload, '"uid"%s*:%s*(-?[%d%.eE+-]+)')
      end
      if type(uid) == 'string' and uid ~= '' then
        rcall('SET', ARGV[ui] .. uid .. KEY_UNIQUE_STATE_SUFFIX, 'running')
      end
    end
  end
  if d then
    if not decoded then
      local ok, dec = pcall(cjson.decode, payload)
      decoded = ok and dec
    end
    local id = type(decoded) == 'table' and decoded['id']
    if type(id) == 'string' or type(id) == 'number' then
      local skey = ARGV[ao + 3] .. tostring(id) .. KEY_JOB_STATUS_SUFFIX
      if decoded['isMonitored'] == true then
        -- resque-v3 string statuses
        rcall('SET', skey, '{"status":"running","updated":' .. ARGV[ao + 2] .. '}', 'EX', '86400')
      else
        -- php-resque integer statuses, only when the producer asked for tracking
        local cur = rcall('GET', skey)
        if cur then
          local sok, st = pcall(cjson.decode, cur)
          if sok and type(st) == 'table' and type(st['status']) == 'number' then
            st['status'] = 2
            st['updated'] = tonum(ARGV[ao + 2])
            rcall('SET', skey, cjson.encode(st), 'KEEPTTL')
          end
        end
      end
    end
  end
end

