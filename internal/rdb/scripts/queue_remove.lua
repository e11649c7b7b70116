-- queue_remove.lua: one chunk of "delete the jobs of a queue that match",
-- walking the queue from its tail towards its head, one call per chunk.
--
-- Invariant. Between calls the list is always U ++ E ++ P:
--   U  jobs that were in the queue when the removal began and that no call
--      has examined yet; workers pop (LPOP) from its head, so it only
--      shrinks from the left;
--   E  jobs examined and kept (none of them matches); nobody touches them
--      while U is not empty;
--   P  jobs pushed since the removal began (producers RPUSH after E).
-- Each call examines the last K jobs of U (positions [s-K, s), s = |U|),
-- removes the matching ones and moves the boundary to s-K: the examined
-- jobs join the head of E. P and E are never read for matching, so a job
-- pushed meanwhile is never deleted and a kept job never moves: removal is
-- LSET to a tombstone plus LREM of that tombstone, inside this one call.
-- A call ends when s reaches 0 (U is empty, or was popped away).
--
-- Finding s again. Pops lower s and a recovery LPUSH (a dead worker's job
-- pushed back to the head) raises it, by amounts nobody records, so each
-- call finds the boundary by content: the previous call returns the last
-- (up to) W jobs of U before the boundary and the first (up to) W jobs of
-- E after it, and the next call looks for that window:
--   1. the largest position p <= the previous boundary where the whole
--      window matches (no pops: p is the previous boundary itself);
--   2. else the smallest p above it (a job was pushed back to the head);
--   3. else the largest p < W where the head of the list is a suffix of
--      the U part of the window followed by the E part (U popped down to
--      fewer than W jobs; p = 0 means U is gone and the walk is over).
-- Payloads with an id (resque-go, php-resque, resque-v3) make the window
-- unique, so the boundary is exact. Only when the same window of byte-
-- identical payloads occurs more than once (id-less Ruby jobs repeated)
-- can step 1 pick a copy: then at most as many identical copies as were
-- popped since the previous call are taken for original jobs, and only
-- copies identical to the examined ones.
--
-- KEYS[1] the queue list
-- ARGV[1] tombstone, unique to this removal (no payload equals it)
-- ARGV[2] K, jobs examined per call
-- ARGV[3] the previous boundary, -1 on the first call (s = LLEN then)
-- ARGV[4] class to match (exact string)
-- ARGV[5] id to match ("" = any id, or none)
-- ARGV[6] args mode: "" (any), "array" (the job's args array equals ARGV[7])
--         or "object" (every key/value of ARGV[7] is in the job's args
--         object, or in the object that is the one element of its args
--         array, as php-resque writes)
-- ARGV[7] args JSON
-- ARGV[8] nu, ARGV[9] ne: sizes of the window's U and E parts
-- ARGV[10..] the window: nu jobs of U, then ne jobs of E
--
-- Returns {more, boundary, removed, examined, nu, ne, window...}: more is 1
-- while U is not empty, 0 when the walk is over; the window is what the
-- next call passes back. examined counts the jobs looked at by this call.
local W = 8
local key = KEYS[1]
local tomb = ARGV[1]
local K = tonumber(ARGV[2])
local prev = tonumber(ARGV[3])
local class, id, mode = ARGV[4], ARGV[5], ARGV[6]
local nu, ne = tonumber(ARGV[8]), tonumber(ARGV[9])
local uwin, ewin = {}, {}
for i = 1, nu do uwin[i] = ARGV[9 + i] end
for i = 1, ne do ewin[i] = ARGV[9 + nu + i] end

local len = redis.call('LLEN', key)

-- fits(items, base, p): does the window sit with its boundary at p?
-- items holds list positions base.. (1-based: items[1] is base). partial
-- accepts a U part cut by the head of the list.
local function fits(items, base, p, partial)
  for i = 1, ne do
    if items[p + i - base] ~= ewin[i] then return false end
  end
  for j = 1, nu do
    local pos = p - j
    if pos < 0 then return partial end
    if items[pos - base + 1] ~= uwin[nu - j + 1] then return false end
  end
  return not partial
end

local function window(lo, hi) -- items of positions lo..hi, and base lo
  return redis.call('LRANGE', key, lo, hi), lo
end

local function locate()
  local top = len - ne -- the boundary is at most here
  -- 1. downwards from the previous boundary, in growing blocks
  local hi, step = math.min(prev, top), 64
  while hi >= nu do
    local lo = math.max(nu, hi - step + 1)
    local items, base = window(lo - nu, hi + ne - 1)
    for p = hi, lo, -1 do
      if fits(items, base, p, false) then return p end
    end
    hi, step = lo - 1, math.min(step * 2, 4096)
  end
  -- 2. upwards from the previous boundary
  local lo, step2 = math.max(prev + 1, nu), 64
  while lo <= top do
    local hi2 = math.min(top, lo + step2 - 1)
    local items, base = window(lo - nu, hi2 + ne - 1)
    for p = lo, hi2 do
      if fits(items, base, p, false) then return p end
    end
    lo, step2 = hi2 + 1, math.min(step2 * 2, 4096)
  end
  -- 3. U popped down to fewer than W jobs
  local items, base = window(0, nu + ne)
  for p = math.min(nu - 1, top), 1, -1 do
    if fits(items, base, p, true) then return p end
  end
  return 0
end

local s = len
if prev >= 0 then s = locate() end

-- matching
local prefilter = nil
if string.match(class, '^[%w_:%.%-]+$') then prefilter = '"' .. class .. '"' end
local want = nil
if mode ~= '' then want = cjson.decode(ARGV[7]) end

local function equal(a, b)
  if type(a) ~= type(b) then return false end
  if type(a) ~= 'table' then return a == b end
  for k, v in pairs(a) do
    if not equal(v, b[k]) then return false end
  end
  for k in pairs(b) do
    if a[k] == nil then return false end
  end
  return true
end

local function contains(have, w)
  if type(have) ~= 'table' then return false end
  for k, v in pairs(w) do
    if not equal(v, have[k]) then return false end
  end
  return true
end

local function matches(raw)
  if prefilter and not string.find(raw, prefilter, 1, true) then return false end
  local ok, job = pcall(cjson.decode, raw)
  if not ok or type(job) ~= 'table' or job.class ~= class then return false end
  if id ~= '' and job.id ~= id then return false end
  if mode == 'array' then return equal(want, job.args) end
  if mode == 'object' then
    local args = job.args
    if contains(args, want) then return true end
    -- php-resque wraps its one assoc array: "args":[{...}]
    return type(args) == 'table' and #args == 1 and args[2] == nil and contains(args[1], want)
  end
  return true
end

local lo = math.max(0, s - K)
local removed, kept = 0, {}
if s > lo then
  local items = redis.call('LRANGE', key, lo, s - 1)
  for i, raw in ipairs(items) do
    if matches(raw) then
      redis.call('LSET', key, lo + i - 1, tomb)
      removed = removed + 1
    elseif #kept < W then
      kept[#kept + 1] = raw
    end
  end
  if removed > 0 then
    -- LREM scans from the end nearer to the chunk
    if lo <= len - s then
      redis.call('LREM', key, removed, tomb)
    else
      redis.call('LREM', key, -removed, tomb)
    end
  end
end

-- the window for the next call: E's new head is what this chunk kept
for i = 1, ne do
  if #kept >= W then break end
  kept[#kept + 1] = ewin[i]
end
local newu = {}
if lo > 0 then newu = redis.call('LRANGE', key, math.max(0, lo - W), lo - 1) end
local more = 0
if lo > 0 then more = 1 end
local out = {more, lo, removed, s - lo, #newu, #kept}
for _, v in ipairs(newu) do out[#out + 1] = v end
for _, v in ipairs(kept) do out[#out + 1] = v end
return out
