/**
 * Redis scripts of the request hot path: one EVALSHA per request authenticates the key from the
 * shared credential cache, counts it against its sliding window, and notes its last use.
 * Time comes from Redis (`TIME`), so every gateway replica uses one clock.
 *
 * Sliding window, O(1) per key: two fixed buckets (current and previous window); the estimate is
 *   previous × (share of the previous window still inside the sliding window) + current.
 * Every request is counted, refused ones too (a client hammering while limited stays limited).
 * Returned times are milliseconds; the gateway rounds them up to whole seconds for headers.
 */
const SLIDING_WINDOW = `
-- record: 'always' counts the cost, refused or not; 'if_allowed' only when it fits; 'never' asks.
local function sliding_window(key_prefix, limit, window, now, cost, record)
  local current_start = now - (now % window)
  local current_key = key_prefix .. ':' .. current_start
  local previous = tonumber(redis.call('GET', key_prefix .. ':' .. (current_start - window)) or '0')
  local current = tonumber(redis.call('GET', current_key) or '0') + cost
  local elapsed = now - current_start
  local weight = (window - elapsed) / window
  local count = previous * weight + current
  local allowed = count <= limit
  if record == 'always' or (record == 'if_allowed' and allowed) then
    if redis.call('INCRBY', current_key, cost) == cost then redis.call('PEXPIRE', current_key, window * 2) end
  end
  local remaining = math.max(0, math.floor(limit - count))
  -- How long until one more request fits: first within this window as the previous bucket's
  -- share shrinks, otherwise in the next window as this bucket's share shrinks.
  local wait = window - elapsed
  if not allowed or remaining == 0 then
    if current + 1 <= limit and previous > 0 then
      wait = math.max(0, (window - elapsed) - (limit - current - 1) * window / previous)
    else
      wait = (window - elapsed) + window * math.max(0, 1 - (limit - 1) / current)
    end
  end
  -- Of the \`cost\` units just asked for, how many fit under the limit (a batch is served in part).
  local fitting = math.max(0, math.min(cost, math.floor(limit - (count - cost))))
  return { allowed and 1 or 0, remaining, math.ceil(wait), fitting }
end

local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
`;

/**
 * KEYS[1] = auth:<token hash>, KEYS[2] = last_used hash
 * ARGV[1] = key prefix for counters, ARGV[2] = window ms
 * → {0} cache miss | {1} revoked, unknown or expired | {2, principal json, allowed, remaining, wait ms, limit}
 */
export const AUTHENTICATE_AND_LIMIT = `${SLIDING_WINDOW}
local cached = redis.call('GET', KEYS[1])
if not cached then return { 0 } end
if cached == 'revoked' or cached == 'unknown' then return { 1 } end
local principal = cjson.decode(cached)
local now = now_ms()
-- An embed session past its expiry is refused like a revoked key (its entry may outlive it).
if principal.embed and now >= tonumber(principal.embed.expires_at_ms) then return { 1 } end
local limit = tonumber(principal.rate_limit_per_minute)
local result = sliding_window(ARGV[1] .. 'rl:key:' .. principal.key_id, limit, tonumber(ARGV[2]), now, 1, 'always')
redis.call('HSET', KEYS[2], principal.key_id, now)
return { 2, cached, result[1], result[2], result[3], limit }
`;

/**
 * A window of its own (per client IP on unauthenticated endpoints, failed authentications per
 * client, the extra calls of an MCP batch on the key's window).
 * KEYS[1] = counter key prefix, ARGV[1] = limit, ARGV[2] = window ms, ARGV[3] = cost,
 * ARGV[4] = when to record the cost: always, if_allowed or never
 * → {allowed, remaining, wait ms, how many of the cost's units fit}
 */
export const LIMIT_ONLY = `${SLIDING_WINDOW}
return sliding_window(KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2]), now_ms(), tonumber(ARGV[3]), ARGV[4])
`;
