"""The memories API through the real handlers and the DynamoDB store (moto): extract, supersede, save, batch,
delete, list, and the profile summarised from them."""

from __future__ import annotations

from tests.fakes.api_calls import SELF_INTRODUCTION, memories_of

USER = "/v1/users/u-1001"


def test_given_a_stated_preference_when_extracted_then_its_field_is_the_slot_save_and_listing_answer(api):
    extracted = api.call("POST", "/v1/users/u-tea/memories/extract", {"user_message": "I prefer tea"})
    saved = api.call("POST", "/v1/users/u-tea/memories", {"memory_type": "PREFERENCE", "content": "I prefer tea"})
    listed = api.call("GET", "/v1/users/u-tea/memories")

    assert [m["field"] for m in extracted.body["saved_memories"]] == ["preference.tea"]
    assert [m["field"] for m in listed.body["items"]] == ["preference.tea"]
    assert (saved.body["outcome"], saved.body["memory"]["field"]) == ("merged", "preference.tea")


def test_extract_a_self_introduction_then_supersede_age(api):
    extracted = api.call("POST", f"{USER}/memories/extract", {
        "action": "save_info", "userMessage": SELF_INTRODUCTION, "assistantMessage": "感谢您分享这些信息!",
        "existingInfo": {},
    })

    assert extracted.status == 200
    body = extracted.body
    assert set(body) == {"action", "extracted_info", "saved_count", "saved_memories", "skipped_fields",
                         "skipped_sentences", "note"}
    assert body["action"] == "save_info"
    info = body["extracted_info"]
    assert info["age"] == 32 and info["education"] == "硕士" and info["university"] in ("浙江大学", "浙大")
    assert info["major"] == "计算机" and info["currentJobTitle"] == "前端开发"
    assert info["totalYearsOfExperience"] == 8 and info["annualIncome"] == 800000
    assert info["currentLocation"] == "杭州"
    assert body["saved_count"] == len(body["saved_memories"]) >= 8
    assert all(set(m) == {"memoryType", "content", "field"} for m in body["saved_memories"])
    assert all(any("\u4e00" <= ch <= "\u9fff" for ch in m["content"]) for m in body["saved_memories"])
    assert body["skipped_fields"] == []

    older = api.call("POST", f"{USER}/memories/extract", {"user_message": "我今年33岁"})
    assert [m["field"] for m in older.body["saved_memories"]] == ["age"]

    loaded = api.call("POST", f"{USER}/context/load", {"query": "用户的年龄和背景", "limit": 20})
    contents = [m["content"] for m in loaded.body["memories"]]
    assert any("33" in c for c in contents) and not any("32岁" in c for c in contents)
    assert loaded.body["total_memories"] == body["saved_count"]
    assert "33" in loaded.body["user_profile_summary"]

    age = next(m for m in memories_of(api) if m["field"] == "age")
    detail = api.call("GET", f"{USER}/memories/{age['memory_key']}")
    assert detail.body["history"][0]["content"] == "用户32岁"
    assert detail.body["history"][0]["superseded_by"] == age["memory_key"]
    assert [m["version"] for m in detail.body["history"]] == [1, 2]  # the field's versions, oldest first


def test_repeating_a_turn_stores_nothing_and_reports_skipped_fields(api):
    api.call("POST", f"{USER}/memories/extract", {"user_message": SELF_INTRODUCTION})
    again = api.call("POST", f"{USER}/memories/extract", {"user_message": SELF_INTRODUCTION})

    assert again.status == 200
    assert again.body["saved_count"] == 0
    assert {"age", "education", "currentLocation"} <= set(again.body["skipped_fields"])


def test_existing_info_fields_are_skipped_not_reextracted(api):
    response = api.call("POST", f"{USER}/memories/extract", {
        "user_message": SELF_INTRODUCTION, "existing_info": {"age": 32, "currentLocation": "杭州"},
    })
    assert {"age", "currentLocation"} <= set(response.body["skipped_fields"])
    assert "age" not in response.body["extracted_info"]
    assert all(m["field"] not in ("age", "currentLocation") for m in response.body["saved_memories"])


def test_create_duplicate_and_supersede_directly(api):
    created = api.call("POST", f"{USER}/memories", {"memoryType": "FACT", "content": "用户32岁", "field": "age"})
    assert created.status == 201 and created.body["outcome"] == "created"
    assert created.body["memory"]["importance"] == 70

    duplicate = api.call("POST", f"{USER}/memories", {"memory_type": "FACT", "content": "用户 32岁", "field": "age"})
    assert duplicate.status == 200
    assert duplicate.body["outcome"] == "duplicate" and duplicate.body["skipped_fields"] == ["age"]

    newer = api.call("POST", f"{USER}/memories", {"memoryType": "FACT", "content": "用户33岁", "field": "age"})
    assert newer.status == 201
    assert newer.body["superseded"]["memory_key"] == created.body["memory"]["memory_key"]
    assert [m["content"] for m in memories_of(api)] == ["用户33岁"]


def test_two_facts_about_one_scheme_both_stay_current_and_only_a_stated_interest_fills_its_slot(api):
    materials = api.call("POST", f"{USER}/memories", {"memoryType": "INTENT", "content": "高才通申请材料已准备好",
                                                       "category": "TTPS"})
    fee = api.call("POST", f"{USER}/memories", {"memoryType": "INTENT", "content": "高才通申请费已经缴纳",
                                                 "category": "TTPS"})

    assert (materials.body["outcome"], fee.body["outcome"]) == ("created", "created")
    assert sorted(m["content"] for m in memories_of(api)) == ["高才通申请材料已准备好", "高才通申请费已经缴纳"]
    interest = api.call("POST", f"{USER}/memories", {"memoryType": "INTENT", "content": "我对高才通很感兴趣",
                                                      "category": "TTPS"})
    assert interest.body["outcome"] == "created" and interest.body["memory"]["field"] == "targetCategory.TTPS"
    again = api.call("POST", f"{USER}/memories", {"memoryType": "INTENT", "content": "我准备申请高才通B类",
                                                   "category": "TTPS"})
    assert again.body["outcome"] == "superseded"
    assert again.body["superseded"]["memory_key"] == interest.body["memory"]["memory_key"]


def test_a_memory_saved_with_a_conversation_id_reaches_the_profile_and_a_transcript_turn_does_not(api):
    saved = api.call("POST", f"{USER}/memories", {"memoryType": "FACT", "content": "用户在香港有雇主",
                                                   "conversationId": "conv-7"})
    assert saved.status == 201
    assert saved.body["memory"]["source"] == "conversation"
    assert saved.body["memory"]["field"] == "hasHKEmployer"
    immigration = api.call("POST", f"{USER}/profile/summarize", {}).body["user_profile"]["immigration"]
    assert immigration["hasHKEmployer"] is True
    newer = api.call("POST", f"{USER}/memories", {"memoryType": "FACT", "content": "用户在香港没有雇主",
                                                   "conversationId": "conv-8"})
    assert newer.body["outcome"] == "superseded"

    turn = api.call("POST", "/v1/users/u-2002/memories", {"memoryType": "FACT", "content": "Caroline: I'm 29",
                                                         "conversationId": "conv-7", "source": "transcript"})
    assert turn.body["memory"]["source"] == "transcript" and turn.body["memory"]["field"] is None
    plain = api.call("POST", "/v1/users/u-2002/memories", {"memoryType": "FACT", "content": "Likes tea"})
    assert plain.body["memory"]["source"] == "api"


def test_a_restatement_answers_merged_with_the_kept_memory_in_save_batch_and_extract(api):
    kept = api.call("POST", f"{USER}/memories", {"memoryType": "FACT", "content": "Is allergic to peanuts"})
    key = kept.body["memory"]["memory_key"]

    merged = api.call("POST", f"{USER}/memories", {"memoryType": "FACT", "content": "I'm allergic to peanuts."})
    assert merged.status == 200 and merged.body["outcome"] == "merged"
    assert merged.body["memory"]["memory_key"] == key and merged.body["skipped_fields"] == [""]

    batch = api.call("POST", f"{USER}/memories/batch", {"memories": [
        {"memoryType": "FACT", "content": "Allergic to peanuts!"},
        {"memoryType": "FACT", "content": "Is allergic to shellfish"}]})
    assert batch.status == 201 and batch.body["saved_count"] == 1
    assert [r["outcome"] for r in batch.body["results"]] == ["merged", "created"]
    assert batch.body["memory_keys"][0] == key

    extracted = api.call("POST", f"{USER}/memories/extract", {"user_message": "I am allergic to peanuts"})
    # Skipped under the slot the statement fills, as saved memories are named.
    assert extracted.body["saved_count"] == 0 and extracted.body["skipped_fields"] == ["allergy.peanuts"]
    assert sorted(m["content"] for m in memories_of(api)) == ["Is allergic to peanuts", "Is allergic to shellfish"]


def test_batch_saves_in_order_with_import_timestamps(api):
    response = api.call("POST", f"{USER}/memories/batch", {"memories": [
        {"memoryType": "FACT", "content": "用户32岁", "field": "age", "createdAt": "2026-02-05T10:00:00Z"},
        {"memoryType": "PREFERENCE", "content": "希望尽快办理", "created_at": "2026-02-05T10:01:00+08:00"},
        {"memoryType": "FACT", "content": "用户33岁", "field": "age", "createdAt": "2026-11-01T10:00:00Z"},
    ]})

    assert response.status == 201
    assert response.body["saved_count"] == 3 and len(response.body["memory_keys"]) == 3
    assert [r["outcome"] for r in response.body["results"]] == ["created", "created", "superseded"]
    current = {m["content"]: m for m in memories_of(api)}
    assert set(current) == {"希望尽快办理", "用户33岁"}
    assert current["希望尽快办理"]["created_at"] == "2026-02-05T02:01:00Z"


def test_delete_removes_the_memory_and_bumps_nothing_else(api):
    key = api.call("POST", f"{USER}/memories", {"memoryType": "FACT", "content": "已婚", "field": "maritalStatus"}
                   ).body["memory"]["memory_key"]
    deleted = api.call("DELETE", f"{USER}/memories/{key}")
    assert deleted.status == 200 and deleted.body == {"deleted": True, "memory_key": key}
    read, again = api.call("GET", f"{USER}/memories/{key}"), api.call("DELETE", f"{USER}/memories/{key}")
    assert read.status == again.status == 404
    assert read.body["error"]["details"] == again.body["error"]["details"] == [{"field": "memory_key"}]


def test_list_paginates_and_filters_by_type(api):
    api.call("POST", f"{USER}/memories/batch", {"memories": [
        {"memoryType": "FACT" if i % 2 else "INTENT", "content": f"memory {i}"} for i in range(9)]})
    seen, cursor = [], None
    while True:
        query = "memory_type=INTENT&limit=2" + (f"&cursor={cursor}" if cursor else "")
        page = api.call("GET", f"{USER}/memories", query=query).body
        seen += [m["content"] for m in page["items"]]
        cursor = page["next_cursor"]
        if not cursor:
            break
    assert seen == ["memory 8", "memory 6", "memory 4", "memory 2", "memory 0"]


def test_summarize_builds_the_profile_from_a_self_introduction(api):
    api.call("POST", f"{USER}/memories/extract", {"user_message": SELF_INTRODUCTION})
    api.call("POST", f"{USER}/memories/extract", {"user_message": "我对高才通B类非常感兴趣，希望尽快办理"})

    response = api.call("POST", f"{USER}/profile/summarize", {"action": "summarize"})

    assert response.status == 200
    body = response.body
    assert set(body) == {"action", "user_profile", "completeness", "narrative_summary"}  # no as_of: the current ones
    profile = body["user_profile"]
    assert set(profile) == {"basic", "career", "immigration", "family"}
    assert profile["basic"]["age"] == "32岁" and profile["basic"]["university"] == "浙江大学"
    assert profile["basic"]["location"] == "杭州" and profile["career"]["jobTitle"] == "前端开发"
    assert profile["career"]["yearsOfExperience"] == "8年" and "80万" in profile["career"]["annualIncome"]
    assert profile["immigration"]["targetCategories"] == ["TTPS"] and profile["immigration"]["timeline"] == "尽快"
    completeness = body["completeness"]
    assert {"age", "education", "jobTitle", "targetCategories"} <= set(completeness["filled_fields"])
    assert {"nationality", "maritalStatus", "hasChildren"} <= set(completeness["missing_fields"])
    filled, missing = len(completeness["filled_fields"]), len(completeness["missing_fields"])
    assert completeness["score"] == round(100 * filled / (filled + missing))
    assert "32岁" in body["narrative_summary"] and "杭州" in body["narrative_summary"]
    assert api.call("POST", f"{USER}/profile/summarize", raw_body=b"{bad").status == 400
