"""What a search answers a caller over HTTP: a match through a synonym, a keyword or a tag is a match at the
default floor, `limit` up to 20 is honoured in every mode, and `total_found` counts the matches, not the page."""

from __future__ import annotations

import pytest

USER = "/v1/users/answers-1"


def save(api, *memories: dict) -> list[str]:
    response = api.call("POST", f"{USER}/memories/batch", {"memories": list(memories)})
    assert response.status == 201, response.body
    return response.body["memory_keys"]


def search(api, **body) -> dict:
    response = api.call("POST", f"{USER}/memories/search", body)
    assert response.status == 200, response.body
    return response.body


def test_a_tenant_synonym_finds_its_memory_in_keyword_mode_at_the_default_floor(api):
    save(api, {"memoryType": "FACT", "content": "月薪三万五"}, {"memoryType": "FACT", "content": "住在杭州"})
    assert api.call("POST", "/v1/synonyms", {"keyword": "月薪", "synonyms": ["工资"]}).status == 201

    body = search(api, query="工资", search_mode="keyword")

    assert [r["content_preview"] for r in body["results"]] == ["月薪三万五"]
    assert body["total_found"] == 1 and body["expanded_keywords"] == ["月薪"]
    assert body["results"][0]["score_breakdown"]["absolute_relevance"] > 0.5


def test_a_builtin_synonym_finds_its_memory_in_keyword_mode_at_the_default_floor(api):
    save(api, {"memoryType": "INTENT", "content": "对高才通B类非常感兴趣"},
         {"memoryType": "FACT", "content": "住在杭州"})

    body = search(api, query="TTPS", search_mode="keyword")

    assert [r["content_preview"] for r in body["results"]] == ["对高才通B类非常感兴趣"]


def test_a_memory_found_only_by_its_keyword_is_a_match(api):
    save(api, {"memoryType": "FACT", "content": "部署前先跑冒烟测试", "keywords": [{"term": "生产环境"}]},
         {"memoryType": "FACT", "content": "住在杭州"})

    for mode in ("keyword", "hybrid"):
        body = search(api, query="生产环境", search_mode=mode)
        assert body["results"] and body["results"][0]["content_preview"] == "部署前先跑冒烟测试", mode


@pytest.mark.parametrize("mode", ["hybrid", "keyword", "semantic"])
def test_a_limit_of_twenty_is_honoured_and_total_found_counts_every_match(api, mode):
    save(api, *({"memoryType": "FACT", "content": f"项目{n}的部署命令是 deploy.sh --env prod{n}"} for n in range(25)))

    body = search(api, query="部署命令", limit=20, search_mode=mode)

    assert len(body["results"]) == 20
    assert body["total_found"] == 25


def test_a_bare_command_is_recalled_first_by_a_chinese_request_to_run_it_again(api):
    """The bare memory `python train.py --epochs 100` among a user's other memories, recalled by 重新执行上次的训练命令
    (no word in common: the embedder's cross-lingual signal finds it)."""
    others = ["Lives in Berlin", "Works as a data engineer at Zalando", "Prefers short answers by email",
              "Has a cat named Miso", "用户喜欢喝咖啡", "Plans a trip to Japan in April", "Speaks German and English"]
    save(api, *[{"memoryType": "FACT", "content": c} for c in others],
         {"memoryType": "FACT", "content": "python train.py --epochs 100"})

    body = search(api, query="重新执行上次的训练命令")

    assert body["results"][0]["content_preview"] == "python train.py --epochs 100", body["results"]
