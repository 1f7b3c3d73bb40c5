"""Export and import through the deployed handlers (JWT tenancy): who may export and import what, that nothing of
another user or tenant comes out, that a page sent twice stores nothing twice, and the errors a bad page gets."""

from __future__ import annotations

from typing import Any

SERVICE = "acme"


def save(api: Any, user: str, content: str, *, tenant: str = SERVICE, **fields: Any) -> None:
    response = api.call("POST", f"/v1/users/{user}/memories", {"memory_type": "FACT", "content": content, **fields},
                        tenant=tenant)
    assert response.status in (200, 201), response.body


def export_all(api: Any, path: str, *, tenant: str = SERVICE, claims: dict[str, str] | None = None
               ) -> list[dict[str, Any]]:
    pages: list[dict[str, Any]] = []
    cursor = ""
    while True:
        response = api.call("GET", path, tenant=tenant, claims=claims, query=f"cursor={cursor}" if cursor else "")
        assert response.status == 200, response.body
        pages.append(response.body)
        cursor = response.body["next_cursor"]
        if not cursor:
            return pages


def test_given_a_user_exported_and_imported_into_another_tenant_then_it_searches_the_same(api):
    save(api, "alice", "Lives in Leeds", field="residence")
    save(api, "alice", "Lives in York", field="residence")
    save(api, "alice", "喜欢喝绿茶，不加糖", memory_type="PREFERENCE")
    api.call("PUT", "/v1/users/alice/hot-memory/status/%E7%AD%BE%E8%AF%81", {"value": "材料已递交"})
    pages = export_all(api, "/v1/users/alice/export")

    imported = [api.call("POST", "/v1/users/alice/import", page, tenant="beta") for page in pages]
    found = api.call("POST", "/v1/users/alice/memories/search", {"query": "绿茶"}, tenant="beta")
    history = api.call("GET", "/v1/users/alice/memories", tenant="beta")

    assert [r.status for r in imported] == [200] * len(pages)
    assert imported[0].body["imported"]["memories"] == 2 and imported[0].body["imported"]["memory_versions"] == 3
    assert imported[0].body["imported"]["hot_memory"] == 1
    assert found.body["results"][0]["content_preview"].startswith("喜欢喝绿茶")
    assert sorted(m["content"] for m in history.body["items"]) == ["Lives in York", "喜欢喝绿茶，不加糖"]


def test_given_other_users_and_tenants_then_the_export_holds_only_the_callers_user(api):
    save(api, "alice", "Alice lives in Leeds")
    save(api, "bob", "Bob's secret")
    save(api, "alice", "Evil's alice secret", tenant="evil")
    api.call("POST", "/v1/synonyms", {"keyword": "Leeds", "synonyms": ["利兹"]}, tenant="evil")

    text = str(export_all(api, "/v1/users/alice/export"))

    assert "Alice lives in Leeds" in text
    assert "secret" not in text and "利兹" not in text


def test_given_a_page_sent_twice_then_the_second_import_stores_nothing(api):
    save(api, "carol", "Lives in Leeds", field="residence")
    (page,) = export_all(api, "/v1/users/carol/export")

    first = api.call("POST", "/v1/users/dave/import", page)
    second = api.call("POST", "/v1/users/dave/import", page)
    listed = api.call("GET", "/v1/users/dave/memories")

    assert first.body["imported"]["memories"] == 1
    assert second.status == 200 and second.body["imported"]["memories"] == 0
    assert second.body["skipped"]["memories"] == 1
    assert len(listed.body["items"]) == 1


def test_given_end_user_tokens_then_a_user_exports_and_imports_only_itself(api, end_user_tokens):
    alice = {"sub": "alice", "tenant_id": SERVICE}
    api.call("POST", "/v1/users/alice/memories", {"memory_type": "FACT", "content": "用户32岁"}, claims=alice)
    (page,) = export_all(api, "/v1/users/alice/export", claims=alice)

    own = api.call("POST", "/v1/users/alice/import", {**page, "synonyms": []}, claims=alice)
    other_export = api.call("GET", "/v1/users/bob/export", claims=alice)
    other_import = api.call("POST", "/v1/users/bob/import", page, claims=alice)
    project = api.call("GET", "/v1/projects/p-1/export", claims=alice)

    assert own.status == 200
    assert (other_export.status, other_import.status, project.status) == (403, 403, 403)


def test_given_end_user_tokens_then_importing_synonyms_needs_the_service_scope(api, end_user_tokens):
    alice = {"sub": "alice", "tenant_id": SERVICE}
    page = {"format": "agent-memory-export", "version": 1,
            "synonyms": [{"keyword": "leeds", "synonym": "利兹", "similarity_score": 0.9}]}

    refused = api.call("POST", "/v1/users/alice/import", page, claims=alice)
    allowed = api.call("POST", "/v1/users/alice/import", page,
                       claims={**alice, "scope": "memory:any-user"})

    assert refused.status == 403 and refused.body["error"]["details"][0]["field"] == "scope"
    assert allowed.status == 200 and allowed.body["imported"]["synonyms"] == 1


def test_a_project_is_exported_and_imported_like_a_user(api):
    api.call("PUT", "/v1/projects/p-1/hot-memory/decision/route", {"value": "TTPS"})
    (page,) = export_all(api, "/v1/projects/p-1/export")

    imported = api.call("POST", "/v1/projects/p-2/import", page)
    hot = api.call("GET", "/v1/projects/p-2/hot-memory")

    assert page["scope"] == {"type": "project", "id": "p-1"}
    assert imported.status == 200
    assert [(e["key"], e["value"]) for e in hot.body["entries"]] == [("route", "TTPS")]


def test_given_a_malformed_version_then_the_422_names_it_and_nothing_is_written(api):
    page = {"format": "agent-memory-export", "version": 1, "memories": [
        {"versions": [{"memory_key": "mem_01kd0000000000000000000001", "memory_type": "FACT", "content": "ok",
                       "importance": 50, "created_at": "2026-01-05T10:00:00Z", "updated_at": "2026-01-05T10:00:00Z",
                       "valid_from": "2026-01-05T10:00:00Z"}]},
        {"versions": [{"memory_key": "mem_01kd0000000000000000000002", "memory_type": "FACT", "content": "bad",
                       "importance": 50, "created_at": "yesterday", "updated_at": "2026-01-05T10:00:00Z",
                       "valid_from": "2026-01-05T10:00:00Z"}]}]}

    refused = api.call("POST", "/v1/users/erin/import", page)
    listed = api.call("GET", "/v1/users/erin/memories")

    assert refused.status == 422
    assert [d["field"] for d in refused.body["error"]["details"]] == ["memories.1.versions.0.created_at"]
    assert listed.body["items"] == []


def test_given_a_forged_cursor_then_the_export_answers_422_naming_it(api):
    refused = api.call("GET", "/v1/users/alice/export", query="cursor=bm90LWEtY3Vyc29y")

    assert refused.status == 422 and refused.body["error"]["details"][0]["field"] == "cursor"
