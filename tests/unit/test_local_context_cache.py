"""The container's layer of the context cache lets go of expired blocks, not only of the least recently used."""

from agent_memory.adapters.context_cache import SWEEP_INTERVAL_SECONDS, LocalContextCache
from agent_memory.domain.models import ScopeRef
from agent_memory.ports import CachedContext

USER = ScopeRef(tenant_id="t1", user_id="u1")


def entry(at: float, ttl: float) -> CachedContext:
    return CachedContext(content="block", created_at=at, expires_at=at + ttl)


def test_expired_entries_are_swept_once_the_interval_has_passed() -> None:
    cache = LocalContextCache(max_entries=100)
    for i in range(10):
        cache.put(USER, f"short{i}", entry(0.0, 30.0))
    cache.put(USER, "long", entry(0.0, 3600.0))
    assert len(cache) == 11

    cache.put(USER, "early", entry(SWEEP_INTERVAL_SECONDS / 2, 300.0))  # before the next sweep: nothing dropped
    assert len(cache) == 12

    cache.put(USER, "later", entry(SWEEP_INTERVAL_SECONDS + 1, 30.0))
    assert len(cache) == 3  # the short-lived ten are gone; the long one, the early one and the new one stay
    assert cache.get(USER, "long", now=SWEEP_INTERVAL_SECONDS + 1) is not None
    assert cache.get(USER, "early", now=SWEEP_INTERVAL_SECONDS + 1) is not None


def test_the_lru_bound_still_holds_between_sweeps() -> None:
    cache = LocalContextCache(max_entries=2)
    for i in range(5):
        cache.put(USER, f"k{i}", entry(1.0, 300.0))
    assert len(cache) == 2
    assert cache.get(USER, "k4", now=2.0) is not None
    assert cache.get(USER, "k0", now=2.0) is None
