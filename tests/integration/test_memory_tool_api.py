"""Claude's memory tool over HTTP: POST /v1/users/{user_id}/memory-tool on the real handlers."""

from __future__ import annotations

import pytest

ROUTE = "/v1/users/{}/memory-tool"


def command(api, body: dict, *, user: str = "u-notes", tenant: str = "acme") -> dict:
    response = api.call("POST", ROUTE.format(user), body, tenant=tenant)
    assert response.status == 200, response.body
    return response.body


def test_create_view_edit_rename_and_delete_a_note(api):
    assert command(api, {"command": "create", "path": "/memories/客户/偏好.md", "file_text": "喜欢邮件沟通\n"}) == {
        "content": "File created successfully at: /memories/客户/偏好.md", "is_error": False}
    command(api, {"command": "str_replace", "path": "/memories/客户/偏好.md", "old_str": "邮件", "new_str": "微信"})
    command(api, {"command": "insert", "path": "/memories/客户/偏好.md", "insert_line": 1, "insert_text": "上午联系\n"})

    viewed = command(api, {"command": "view", "path": "/memories/客户/偏好.md"})["content"]
    assert "喜欢微信沟通" in viewed and "上午联系" in viewed

    command(api, {"command": "rename", "old_path": "/memories/客户", "new_path": "/memories/clients"})
    listing = command(api, {"command": "view", "path": "/memories"})["content"]
    assert "/memories/clients/偏好.md" in listing and "客户" not in listing

    command(api, {"command": "delete", "path": "/memories/clients"})
    assert "偏好" not in command(api, {"command": "view", "path": "/memories"})["content"]


@pytest.mark.parametrize("path", [
    "/memories/../etc/passwd", "/etc/passwd", "/memories/%2e%2e/secrets", "/memories/..%2fsecrets",
    "/memories\\..\\x", "/memoriesX/a", "/memories/a\x00b", "/memories/．．/x",
])
def test_a_path_outside_memories_is_an_error_answer_and_writes_nothing(api, path):
    answer = command(api, {"command": "create", "path": path, "file_text": "x"})

    assert answer["is_error"] is True
    assert command(api, {"command": "view", "path": "/memories"})["content"].count("\n") <= 1


def test_files_are_kept_per_tenant_and_user(api):
    command(api, {"command": "create", "path": "/memories/secret.md", "file_text": "acme only"})

    for user, tenant in (("u-notes", "globex"), ("u-other", "acme")):
        answer = command(api, {"command": "view", "path": "/memories/secret.md"}, user=user, tenant=tenant)
        assert answer["is_error"] is True


def test_a_command_the_model_got_wrong_is_an_error_answer_not_a_422(api):
    answer = command(api, {"command": "shred", "path": "/memories/x"})
    assert answer["is_error"] is True and "shred" in answer["content"]


def test_a_body_that_is_not_an_object_is_a_422(api):
    response = api.call("POST", ROUTE.format("u-notes"), ["view"])
    assert response.status == 422
