"""The SynonymStore port in memory: each synonym stored both ways with its keyword, normalized as the DynamoDB
store normalizes them."""

from __future__ import annotations

from agent_memory.domain.text.keywords import normalize_keyword


class FakeSynonymStore:
    def __init__(self) -> None:
        self.pairs_by_tenant: dict[str, dict[tuple[str, str], float]] = {}  # tenant -> (keyword, synonym) -> similarity

    def add(self, tenant_id: str, keyword: str, synonyms: list[str], similarity: float) -> int:
        term = normalize_keyword(keyword)
        pairs = {(term, normalize_keyword(s)) for s in synonyms} | {(normalize_keyword(s), term) for s in synonyms}
        written = {(a, b) for a, b in pairs if a and b and a != b}
        # Stored as the table stores it: four decimals.
        self.pairs_by_tenant.setdefault(tenant_id, {}).update(dict.fromkeys(written, round(similarity, 4)))
        return len(written)

    def synonyms_for(self, tenant_id: str, terms: list[str]) -> dict[str, list[tuple[str, float]]]:
        stored = self.pairs_by_tenant.get(tenant_id, {})
        found = {}
        for term in terms:
            entries = [(b, score) for (a, b), score in stored.items() if a == normalize_keyword(term)]
            if entries:
                found[term] = sorted(entries, key=lambda pair: (-pair[1], pair[0]))
        return found

    def pairs(self, tenant_id: str) -> dict[str, dict[str, float]]:
        table: dict[str, dict[str, float]] = {}
        for (a, b), score in self.pairs_of(tenant_id).items():
            table.setdefault(a, {})[b] = score
        return table

    def pairs_of(self, tenant_id: str) -> dict[tuple[str, str], float]:
        return dict(self.pairs_by_tenant.get(tenant_id, {}))

    def forget(self, tenant_id: str) -> None:
        """Nothing is cached here."""
