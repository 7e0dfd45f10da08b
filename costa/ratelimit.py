"""A request rate limit per client: a token bucket per key (the client's address), refilled at `per_minute / 60` a
second and holding a quarter of a minute's requests, so a burst of `per_minute / 4` passes and a steady crowd is held
to the rate. Keys idle long enough to have refilled are forgotten, so the table stays bounded.

Example:
    >>> now = [0.0]
    >>> limit = RateLimit(per_minute=8, clock=lambda: now[0])
    >>> [limit.wait("a") for _ in range(3)]  # a burst of 8 / 4 = 2 passes, the third waits 7.5 s
    [0.0, 0.0, 7.5]
    >>> limit.wait("b")  # another client is not held back
    0.0
    >>> now[0] = 7.5
    >>> limit.wait("a")
    0.0
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

#: Most clients remembered at once (the oldest full buckets are dropped first).
MAX_KEYS = 100_000


@dataclass
class Bucket:
    tokens: float
    at: float


@dataclass
class RateLimit:
    """`per_minute` requests per key (0: no limit); `wait(key)` takes one and returns 0, or the seconds to wait."""

    per_minute: float
    clock: Callable[[], float] = time.monotonic
    buckets: dict[str, Bucket] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def burst(self) -> float:
        return max(1.0, self.per_minute / 4)

    def wait(self, key: str) -> float:
        if self.per_minute <= 0:
            return 0.0
        rate = self.per_minute / 60.0
        now = self.clock()
        with self._lock:
            b = self.buckets.get(key)
            if b is None:
                if len(self.buckets) >= MAX_KEYS:
                    self._forget(now, rate)
                b = self.buckets[key] = Bucket(self.burst, now)
            b.tokens = min(self.burst, b.tokens + (now - b.at) * rate)
            b.at = now
            if b.tokens >= 1.0:
                b.tokens -= 1.0
                return 0.0
            return (1.0 - b.tokens) / rate

    def _forget(self, now: float, rate: float) -> None:
        full = [k for k, b in self.buckets.items() if b.tokens + (now - b.at) * rate >= self.burst]
        for k in full or list(self.buckets)[: MAX_KEYS // 10]:
            del self.buckets[k]


def refusal(limit: RateLimit, seconds: float) -> str:
    """The sentence a refused client reads."""
    return (
        f"too many requests from your address: at most {limit.per_minute:g} a minute (COSTA_RATE_LIMIT); nothing "
        f"was done — wait {max(1, round(seconds))} s and send again"
    )
