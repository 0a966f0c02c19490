/**
 * @module The Lua scripts that keep captured values and their budgets consistent in Redis: each runs
 * atomically, so two replicas putting at once can never push an owner or the total over its budget.
 *
 * Layout under the prefix P (`toolpacks:<name>:`), owner O, key K, member M = `O:K` (owners hold no `:`):
 *   P v:M        the body (string, with PX = the value's TTL: Redis frees it by itself)
 *   P i:O        hash K → `<size>|<info json>` (what list() reads and what the budgets count)
 *   P o:O        zset K → insertion sequence (the owner's oldest first)
 *   P all        zset M → insertion sequence (everyone's oldest first)
 *   P exp        zset M → expiry (ms): a sweep drops expired members from the indexes and the counts
 *   P owners     zset O → the owner's stored bytes (the largest owner gives up values first when the total is
 *                over);  P total → all owners' stored bytes;  P seq → counter
 *   P n:O        hash counter → last number handed out by next() (PX: the counter's TTL)
 * Keys are built inside the scripts, so this needs a single Redis (or one shard), not Redis Cluster.
 */

/** Shared by every script: ARGV[1] is the prefix; `now` is Redis's clock, the one the TTLs use. */
const PRELUDE = `
if redis.replicate_commands then pcall(redis.replicate_commands) end
local P = ARGV[1]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)

local function drop(o, k)
  local m = o .. ':' .. k
  local inf = redis.call('HGET', P .. 'i:' .. o, k)
  redis.call('DEL', P .. 'v:' .. m)
  redis.call('ZREM', P .. 'o:' .. o, k)
  redis.call('ZREM', P .. 'all', m)
  redis.call('ZREM', P .. 'exp', m)
  if not inf then return 0 end
  redis.call('HDEL', P .. 'i:' .. o, k)
  local s = tonumber(string.match(inf, '^(%d+)'))
  if tonumber(redis.call('ZINCRBY', P .. 'owners', -s, o)) <= 0 then redis.call('ZREM', P .. 'owners', o) end
  redis.call('DECRBY', P .. 'total', s)
  return s
end

local function split(m)
  local i = string.find(m, ':', 1, true)
  return string.sub(m, 1, i - 1), string.sub(m, i + 1)
end

local function sweep()
  local expired = redis.call('ZRANGEBYSCORE', P .. 'exp', '-inf', now, 'LIMIT', 0, 1000)
  for _, m in ipairs(expired) do
    local o, k = split(m)
    drop(o, k)
  end
end
`;

/** ARGV: P, owner, key, body, info, size, ttlMs, maxOwner, maxTotal → {1, evicted…} | {0}. */
export const PUT = `${PRELUDE}
local owner, key, body, info = ARGV[2], ARGV[3], ARGV[4], ARGV[5]
local size, ttl = tonumber(ARGV[6]), tonumber(ARGV[7])
local maxOwner, maxTotal = tonumber(ARGV[8]), tonumber(ARGV[9])
sweep()
drop(owner, key)
if size > maxOwner or size > maxTotal then return {0} end
local out = {1}
local function oldestOfOwner() return redis.call('ZRANGE', P .. 'o:' .. owner, 0, 0)[1] end
-- Past the total: the owner holding the most gives up its oldest value; among owners holding the same (the
-- first 16 by id), the one whose oldest value is the oldest. The memory store picks the same way.
local function victim()
  local top = redis.call('ZREVRANGE', P .. 'owners', 0, 0, 'WITHSCORES')
  if not top[1] then return nil end
  local tied = redis.call('ZRANGEBYSCORE', P .. 'owners', top[2], top[2], 'LIMIT', 0, 16)
  local bestO, bestK, bestSeq
  for _, o in ipairs(tied) do
    local first = redis.call('ZRANGE', P .. 'o:' .. o, 0, 0, 'WITHSCORES')
    if first[1] and (not bestSeq or tonumber(first[2]) < bestSeq) then
      bestO, bestK, bestSeq = o, first[1], tonumber(first[2])
    end
  end
  return bestO, bestK
end
while (tonumber(redis.call('ZSCORE', P .. 'owners', owner)) or 0) + size > maxOwner do
  local k = oldestOfOwner()
  if not k then break end
  drop(owner, k)
  table.insert(out, k)
end
while (tonumber(redis.call('GET', P .. 'total')) or 0) + size > maxTotal do
  local o, k = victim()
  if not o then break end
  drop(o, k)
  if o == owner then table.insert(out, k) end
end
local m = owner .. ':' .. key
local seq = redis.call('INCR', P .. 'seq')
redis.call('SET', P .. 'v:' .. m, body, 'PX', ttl)
redis.call('HSET', P .. 'i:' .. owner, key, size .. '|' .. info)
redis.call('ZADD', P .. 'o:' .. owner, seq, key)
redis.call('ZADD', P .. 'all', seq, m)
redis.call('ZADD', P .. 'exp', now + ttl, m)
redis.call('ZINCRBY', P .. 'owners', size, owner)
redis.call('INCRBY', P .. 'total', size)
return out
`;

/** ARGV: P, owner, key → {body, sizeAndInfo} | {}. */
export const GET = `${PRELUDE}
local m = ARGV[2] .. ':' .. ARGV[3]
local exp = tonumber(redis.call('ZSCORE', P .. 'exp', m))
if not exp or exp <= now then return {} end
local body = redis.call('GET', P .. 'v:' .. m)
local inf = redis.call('HGET', P .. 'i:' .. ARGV[2], ARGV[3])
if not body or not inf then return {} end
return {body, inf}
`;

/** ARGV: P, owner → {key, sizeAndInfo, …} oldest first. */
export const LIST = `${PRELUDE}
sweep()
local keys = redis.call('ZRANGE', P .. 'o:' .. ARGV[2], 0, -1)
local out = {}
for _, k in ipairs(keys) do
  local inf = redis.call('HGET', P .. 'i:' .. ARGV[2], k)
  if inf then
    table.insert(out, k)
    table.insert(out, inf)
  end
end
return out
`;

/** ARGV: P, owner, key → 1 when a live value was removed, else 0. */
export const DELETE = `${PRELUDE}
local m = ARGV[2] .. ':' .. ARGV[3]
local exp = tonumber(redis.call('ZSCORE', P .. 'exp', m))
drop(ARGV[2], ARGV[3])
if exp and exp > now then return 1 end
return 0
`;

/** ARGV: P, owner → number of values removed (the owner's counters go too). */
export const CLEAR = `${PRELUDE}
local keys = redis.call('ZRANGE', P .. 'o:' .. ARGV[2], 0, -1)
for _, k in ipairs(keys) do drop(ARGV[2], k) end
redis.call('DEL', P .. 'n:' .. ARGV[2])
return #keys
`;

/** ARGV: P, owner, counter, ttlMs → the counter's next number. */
export const NEXT = `
local key = ARGV[1] .. 'n:' .. ARGV[2]
local n = redis.call('HINCRBY', key, ARGV[3], 1)
redis.call('PEXPIRE', key, ARGV[4])
return n
`;

/** ARGV: P, owner → {ownerBytes, totalBytes}. */
export const USAGE = `${PRELUDE}
sweep()
return {tonumber(redis.call('ZSCORE', P .. 'owners', ARGV[2])) or 0, tonumber(redis.call('GET', P .. 'total')) or 0}
`;

/**
 * ARGV: P, digest, max → publishes the digest to P ended; returns the latest end forgotten (0: none). P ended holds
 * the `max` latest ends (digest → when it ended); P ended:forgotten, the latest end it had to drop: an id issued
 * before it may have ended and is not rebuilt, so dropping one can never bring an ended id back.
 */
export const END = `${PRELUDE}
local key = P .. 'ended'
local horizon = P .. 'ended:forgotten'
redis.call('ZADD', key, now, ARGV[2])
local over = redis.call('ZCARD', key) - tonumber(ARGV[3])
if over > 0 then
  local last = redis.call('ZRANGE', key, over - 1, over - 1, 'WITHSCORES')
  redis.call('ZREMRANGEBYRANK', key, 0, over - 1)
  if tonumber(last[2]) > (tonumber(redis.call('GET', horizon)) or 0) then redis.call('SET', horizon, last[2]) end
end
redis.call('PUBLISH', key, ARGV[2])
return tonumber(redis.call('GET', horizon)) or 0
`;
