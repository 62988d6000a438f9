"""The Redis scripts behind shared admission: each one atomic, each on Redis's own clock.

Keys (one hash tag per pool, so a Redis Cluster keeps a pool on one node):

- ``leases``: sorted set, a slot held by a request, scored by its expiry (ms, Redis ``TIME``);
- ``limit``: how many leases may exist at once (written by whoever sets the pool's limit);
- ``tickets``: sorted set, the waiting acquirers, scored by arrival (Redis ms) plus a handicap
  that grows with the expected length: shortest first among requests that arrive together,
  first come first served across longer spans (a request of the longest kind is overtaken only
  by requests that arrive within ``max_reorder_wait`` after it);
- ``turns``: sorted set of the keys (callers) with tickets waiting, in the order of their next
  turn: the line takes one ticket of each key in turn (round robin, as a dispatcher's own
  queue does), each key's tickets in score order, so one heavy caller, in any process, cannot
  starve the others. A ticket's id carries its key (``#k<key>``) and handicap (``#h<ms>``);
- ``waiters``: sorted set, each waiting ticket scored by its heartbeat expiry, so a waiter that
  died leaves the queue instead of blocking it;
- ``lost``: a counter of leases found expired when their holder renewed them;
- ``band``: hash, for a static server (``bandmode`` set by the leader): each granted lease
  whose request has not started yet (it waits in the server's queue for the next batch) and
  its expected length, so a request much longer or shorter waits for the batch after (the
  next batch holds similar lengths whichever process sent them);
- ``released``: a channel; its messages name the tickets that a release (or a raised limit:
  ``*``, everyone) lets through;
- ``procs``: sorted set of live processes scored by heartbeat expiry (their count sizes the
  local fallback); ``epoch``: a token set once, so a Redis that lost its keys is noticed.

Expired leases and dead waiters are swept by every script that reads them, so nothing depends
on a janitor process. Clients never send a time: Redis's ``TIME`` is the only clock.
"""

from __future__ import annotations

__all__ = [
    "ACQUIRE",
    "ACQUIRE_MANY",
    "ENQUEUE",
    "ENQUEUE_MANY",
    "PAUSE",
    "RELEASE",
    "RENEW",
    "keys",
    "script_keys",
]

# the time in ms, and both sweeps: every script starts with it
_PRELUDE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local dead = redis.call('ZRANGEBYSCORE', KEYS[4], '-inf', now)
for _, w in ipairs(dead) do
  redis.call('ZREM', KEYS[3], w)
  redis.call('ZREM', KEYS[4], w)
end
"""

# the line: ``line(tickets, turns, n, target)`` is the first ``n`` waiting tickets in the order
# they are served, as {id, score} pairs, ending early at ``target`` (if given) when it is among
# them. Keys take turns, each key's tickets in score order; a key without tickets leaves the
# round. One key (the usual case): the tickets' own order, reading only the first ``n``.
_LINE = """
local function line(tickets, turns, n, target)
  local out = {}
  if n <= 0 then
    return out
  end
  if redis.call('ZCARD', turns) <= 1 then
    local got = redis.call('ZRANGE', tickets, 0, n - 1, 'WITHSCORES')
    for i = 1, #got, 2 do
      table.insert(out, {got[i], tonumber(got[i + 1])})
      if got[i] == target then
        break
      end
    end
    return out
  end
  local all = redis.call('ZRANGE', tickets, 0, -1, 'WITHSCORES')
  local per, seen, order, listed = {}, {}, {}, {}
  for i = 1, #all, 2 do
    local k = string.match(all[i], '#k([^#]*)#h') or ''
    if not per[k] then
      per[k] = {}
      table.insert(seen, k)
    end
    table.insert(per[k], {all[i], tonumber(all[i + 1])})
  end
  for _, k in ipairs(redis.call('ZRANGE', turns, 0, -1)) do
    if per[k] then
      table.insert(order, k)
      listed[k] = true
    else
      redis.call('ZREM', turns, k)
    end
  end
  for _, k in ipairs(seen) do
    if not listed[k] then
      table.insert(order, k)
    end
  end
  local r = 1
  while #out < n do
    local more = false
    for _, k in ipairs(order) do
      local t = per[k][r]
      if t then
        more = true
        table.insert(out, t)
        if t[1] == target or #out >= n then
          return out
        end
      end
    end
    if not more then
      break
    end
    r = r + 1
  end
  return out
end
"""

# KEYS: leases, limit, tickets, waiters, seq, turns   ARGV: ticket, ttl_ms, handicap_ms
# -> the ticket's score (its place in line: Redis ms plus the handicap)
_ENQUEUE_ONE = """
local function enqueue(ticket, ttl, handicap)
  -- a key that has no ticket waiting (new, or back after its last one went) takes the last turn
  local k = string.match(ticket, '#k([^#]*)#h') or ''
  local back = not redis.call('ZSCORE', KEYS[6], k)
  if not back and redis.call('ZCARD', KEYS[6]) > 1 then
    back = true
    for _, t in ipairs(redis.call('ZRANGE', KEYS[3], 0, -1)) do
      if (string.match(t, '#k([^#]*)#h') or '') == k then
        back = false
        break
      end
    end
  end
  if back then
    redis.call('ZADD', KEYS[6], redis.call('INCR', KEYS[5]), k)
  end
  local score = now + handicap
  redis.call('ZADD', KEYS[3], score, ticket)
  redis.call('ZADD', KEYS[4], now + ttl, ticket)
  return score
end
"""

ENQUEUE = (
    _PRELUDE
    + _ENQUEUE_ONE
    + """
return enqueue(ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]))
"""
)

# ENQUEUE for several tickets at once (ARGV: 3 per ticket) -> their scores, in order
ENQUEUE_MANY = (
    _PRELUDE
    + _ENQUEUE_ONE
    + """
local out = {}
for i = 1, #ARGV, 3 do
  table.insert(out, enqueue(ARGV[i], tonumber(ARGV[i + 1]), tonumber(ARGV[i + 2])))
end
return out
"""
)

# KEYS: leases, limit, tickets, waiters, pause, band, bandmode, turns, seq, granted
# ARGV: ticket, lease, ttl_ms, default_limit, ready_ms, expected tokens (-1: unknown), due_ms
# -> {granted (1, 0; -1: the ticket is gone), leases held, limit, ms the pool stays paused,
#     1 if the lease joined the band (its holder says when its request starts)}.
# A ticket is not granted before ``ready_ms`` (its enqueue time plus a short gathering window),
# so requests that several processes send at once are in line, and ordered, before the first
# is granted (unless it is alone in line on a pool that granted nothing for a whole window:
# that is no burst, and it goes at once); nor while a 429/503 somewhere in the pool holds it
# (``pause``); nor, in band mode, while its length and the longest of those waiting for the
# next batch differ over 2x (and 16 tokens), unless it is due (it waited
# ``max_reorder_wait``). Nor does a ticket overtake one ahead of it still in its own gathering
# window (its id ends with ``#h`` and its handicap, so its ready time is its score minus that
# plus the same window).
_ACQUIRE_ONE = """
local function handicap(ticket)  -- a ticket's id ends with "#h" and its handicap in ms
  return tonumber(string.match(ticket, '#h(%d+)$') or 0)
end
local function acquire(ticket, lease, ttl, default_limit, ready, n, due)
  local limit = tonumber(redis.call('GET', KEYS[2]) or default_limit)
  local used = redis.call('ZCARD', KEYS[1])
  local score = redis.call('ZSCORE', KEYS[3], ticket)
  if not score then
    return {-1, used, limit, 0, 0}
  end
  local paused = math.max(0, tonumber(redis.call('GET', KEYS[5]) or 0) - now)
  local ahead = line(KEYS[3], KEYS[8], limit - used, ticket)  -- up to and including ours
  local rank = #ahead - 1
  local gather = ready - tonumber(score) + handicap(ticket)
  -- the gathering window orders a burst before its first grant; a ticket alone in line on a
  -- pool that granted nothing for a whole window is no burst: it goes at once
  local quiet = rank == 0 and redis.call('ZCARD', KEYS[3]) == 1
    and now - tonumber(redis.call('GET', KEYS[10]) or 0) > gather
  local early = now < ready and not quiet
  local wait = rank < 0 or ahead[#ahead][1] ~= ticket or early or paused > 0
  if not wait and rank > 0 then  -- nobody overtakes a ticket ahead still in its gathering window
    for i = 1, rank do
      if ahead[i][2] - handicap(ahead[i][1]) + gather > now then
        wait = true
        break
      end
    end
  end
  local banded = redis.call('EXISTS', KEYS[7]) == 1 and n >= 0
  if banded and not wait and now < due then
    local longest = -1
    local band = redis.call('HGETALL', KEYS[6])
    for i = 1, #band, 2 do
      if redis.call('ZSCORE', KEYS[1], band[i]) then
        longest = math.max(longest, tonumber(band[i + 1]))
      else
        redis.call('HDEL', KEYS[6], band[i])
      end
    end
    wait = longest >= 0 and (n > 2 * math.max(longest, 16) or longest > 2 * math.max(n, 16))
  end
  if wait then
    redis.call('ZADD', KEYS[4], 'XX', now + ttl, ticket)
    return {0, used, limit, paused, 0}
  end
  redis.call('ZADD', KEYS[1], now + ttl, lease)
  redis.call('ZREM', KEYS[3], ticket)
  redis.call('ZREM', KEYS[4], ticket)
  local key = string.match(ticket, '#k([^#]*)#h') or ''
  redis.call('ZADD', KEYS[8], redis.call('INCR', KEYS[9]), key)  -- its key's next turn: last
  redis.call('SET', KEYS[10], now)  -- the last grant
  if banded then
    redis.call('HSET', KEYS[6], lease, n)
  end
  return {1, used + 1, limit, 0, banded and 1 or 0}
end
"""

ACQUIRE = (
    _PRELUDE
    + _LINE
    + _ACQUIRE_ONE
    + """
return acquire(ARGV[1], ARGV[2], tonumber(ARGV[3]), ARGV[4], tonumber(ARGV[5]),
  tonumber(ARGV[6]), tonumber(ARGV[7]))
"""
)

# ACQUIRE for several tickets at once (ARGV: 7 per ticket, as ACQUIRE's) -> one reply each,
# in order: a process's waiters that look again at the same moment (a burst's gathering
# window ends for all of them together) make one call, not one each queued behind the others.
# The same as ACQUIRE called for each in turn: the script is atomic.
ACQUIRE_MANY = (
    _PRELUDE
    + _LINE
    + _ACQUIRE_ONE
    + """
local out = {}
for i = 1, #ARGV, 7 do
  table.insert(out, acquire(ARGV[i], ARGV[i + 1], tonumber(ARGV[i + 2]), ARGV[i + 3],
    tonumber(ARGV[i + 4]), tonumber(ARGV[i + 5]), tonumber(ARGV[i + 6])))
end
return out
"""
)

# KEYS: pause   ARGV: ms  -> the pool is paused (no grant) until Redis time now + ms, or later
PAUSE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local untl = now + tonumber(ARGV[1])
if untl > tonumber(redis.call('GET', KEYS[1]) or 0) then
  redis.call('SET', KEYS[1], untl, 'PX', tonumber(ARGV[1]) + 1000)
end
return untl
"""

# KEYS: leases, limit, tickets, waiters, channel, band, turns   ARGV: lease or ticket ids...
# idempotent: a lease or ticket already gone is no error. When slots were freed, the tickets
# that may now be granted (the first ``limit - used`` in line) are published by id, so only
# their waiters look again: one wake-up per freed slot, not one per waiter in the pool.
RELEASE = (
    _PRELUDE
    + _LINE
    + """
local gone = 0
for i = 1, #ARGV do
  redis.call('HDEL', KEYS[6], ARGV[i])
  gone = gone + redis.call('ZREM', KEYS[1], ARGV[i])
  redis.call('ZREM', KEYS[3], ARGV[i])
  redis.call('ZREM', KEYS[4], ARGV[i])
end
if gone > 0 then
  local free = tonumber(redis.call('GET', KEYS[2]) or 1) - redis.call('ZCARD', KEYS[1])
  if free > 0 then
    local heads = {}
    for _, t in ipairs(line(KEYS[3], KEYS[7], math.min(free, 256))) do
      table.insert(heads, t[1])
    end
    if #heads > 0 then
      redis.call('PUBLISH', KEYS[5], table.concat(heads, ' '))
    end
  end
end
return gone
"""
)

# KEYS: leases, limit, tickets, waiters, lost, procs, epoch
# ARGV: ttl_ms, owner, epoch, n_leases, m_local, leases..., local leases..., tickets...
# -> {epoch now, live processes, 1 if Redis had lost its keys else 0, Redis µs, leases held by
#     every process, lost leases...}.
# A changed or missing epoch means Redis lost its keys (a restart): the caller's leases are put
# back, not reported lost. Local leases (granted on the fallback's share while Redis was away)
# are added, so Redis counts their requests, which still run, until they are released.
RENEW = (
    _PRELUDE
    + """
local ttl = tonumber(ARGV[1])
local n = tonumber(ARGV[4])
local m = tonumber(ARGV[5])
local epoch = redis.call('GET', KEYS[7])
local restarted = epoch ~= ARGV[3]
if not epoch then  -- lost: a new one, which every other process's heartbeat tells from its own
  epoch = ARGV[3] .. '/' .. now
  redis.call('SET', KEYS[7], epoch)
end
local out = {epoch, 0, restarted and 1 or 0, tonumber(t[1]) * 1000000 + tonumber(t[2]), 0}
for i = 6 + n, 5 + n + m do  -- admitted on a local share while Redis was away: they run
  redis.call('ZADD', KEYS[1], 'NX', now + ttl, ARGV[i])
end
for i = 6, 5 + n do
  if restarted then
    redis.call('ZADD', KEYS[1], 'NX', now + ttl, ARGV[i])
  end
  if redis.call('ZADD', KEYS[1], 'XX', 'CH', now + ttl, ARGV[i]) == 0 then
    if not redis.call('ZSCORE', KEYS[1], ARGV[i]) then
      table.insert(out, ARGV[i])
    end
  end
end
for i = 6 + n + m, #ARGV do
  redis.call('ZADD', KEYS[4], 'XX', now + ttl, ARGV[i])
end
if #out > 5 then
  redis.call('INCRBY', KEYS[5], #out - 5)
end
out[5] = redis.call('ZCARD', KEYS[1])
redis.call('ZREMRANGEBYSCORE', KEYS[6], '-inf', now)
redis.call('ZADD', KEYS[6], now + ttl, ARGV[2])
out[2] = redis.call('ZCARD', KEYS[6])
return out
"""
)


def keys(pool: str) -> dict[str, str]:
    """The pool's key names, all under one hash tag."""
    base = f"fairstream:{{{pool}}}:"
    names = ("leases", "limit", "tickets", "waiters", "seq", "lost", "released", "procs", "epoch",
             "leader", "samples", "pause", "band", "bandmode", "turns", "granted")  # fmt: skip
    return {name: base + name for name in names}


_COMMON = ("leases", "limit", "tickets", "waiters")
_MORE = {
    "enqueue": ("seq", "turns"),
    "release": ("released", "band", "turns"),
    "renew": ("lost", "procs", "epoch"),
    "acquire": ("pause", "band", "bandmode", "turns", "seq", "granted"),
}


def script_keys(name: str, names: dict[str, str]) -> list[str]:
    """The KEYS a script takes, in its order (``names``: the pool's, from :func:`keys`)."""
    if name in ("lead", "pause"):
        return [names["leader" if name == "lead" else "pause"]]
    return [names[k] for k in (*_COMMON, *_MORE.get(name.removesuffix("_many"), ()))]
