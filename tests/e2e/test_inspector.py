"""The memory inspector (/ui) in a real browser: Debian's chromium, driven by playwright, against `make run`'s stack.

Skips when playwright or chromium is missing (never downloads a browser). `UPDATE_SCREENSHOT=1` (make screenshot)
writes the screenshot to docs/inspector.png; otherwise it goes to the test's temporary directory.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import urllib.request
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.stack import ROOT, Stack, running_stack

sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install -r "
                                                             "requirements-dev.txt)")
expect = sync_api.expect

CHROMIUM = os.environ.get("CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
if CHROMIUM is None:
    pytest.skip("no chromium on PATH (Debian: apt-get install chromium); the inspector's browser tests need it",
                allow_module_level=True)

SCREENSHOT = ROOT / "docs" / "inspector.png"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking"]
TIMEOUT_MS = 20_000


@dataclass(frozen=True)
class Seeded:
    tenant: str
    user: str


def _post(stack: Stack, path: str, body: dict[str, Any]) -> dict[str, Any]:
    request = urllib.request.Request(stack.url + path, data=json.dumps(body).encode(), method="POST",
                                     headers={"content-type": "application/json"})
    with urllib.request.urlopen(request, timeout=60) as response:
        return dict(json.loads(response.read()))


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    # Intents are kept ten years: the memories page shows the policy and the intent's expiry.
    with running_stack(tmp_path_factory.mktemp("inspector-stack"),
                       env_overrides={"MEMORY_RETENTION_DAYS": '{"INTENT": 3650}'}) as running:
        yield running


@pytest.fixture(scope="module")
def seeded(stack: Stack) -> Seeded:
    """A user with Chinese and English memories, a field stated twice (a history), hot memory and a weekly report."""
    import time

    from agent_memory_client import MemoryClient

    # The stack is this module's own (a fresh data dir): a readable user id for the screenshot, a unique tenant.
    tenant, user = f"acme-{uuid.uuid4().hex[:6]}", "u-1001"
    with MemoryClient(stack.url, tenant_id=tenant, max_retries=0) as memory:
        memory.save(user, memory_type="FACT", content="我住在杭州，在阿里巴巴做产品经理", field="city", importance=70,
                    created_at="2025-03-02T10:00:00+08:00")
        assert memory.save(user, memory_type="FACT", content="我搬到了上海，现在在字节跳动工作", field="city",
                           importance=85)["outcome"] == "superseded"
        memory.save(user, memory_type="PREFERENCE", content="Prefers concise answers in English, with bullet points")
        memory.save(user, memory_type="INTENT", content="对高才通B类感兴趣，计划明年申请香港身份")
        memory.save(user, memory_type="FACT", content="Has a master's degree in computer science from Zhejiang "
                                                      "University", field="education")
        memory.save(user, memory_type="PREFERENCE", content="喜欢打网球，周末常去滨江的球场")
        memory.set_hot_memory("users", user, "meta", "name", "张伟 (Zhang Wei)", priority=10)
        memory.set_hot_memory("users", user, "status", "申请进度", "材料准备中", priority=5)
        memory.set_hot_memory("users", user, "decision", "route", {"scheme": "TTPS", "category": "B"}, priority=3)
        memory.set_hot_memory("users", user, "preference", "language", "English first", priority=1)
        # Last week's log, rolled up by the weekly rollup (through the queue and the workers) into a report.
        monday = date.today() - timedelta(days=date.today().weekday() + 7)
        memory.log("users", user, "c-week", [
            {"role": "user", "content": "我已经提交了高才通B类的申请材料", "created_at": f"{monday}T09:00:00+08:00"},
            {"role": "user", "content": "Also booked an IELTS test for next month",
             "created_at": f"{monday + timedelta(days=2)}T10:00:00+08:00"},
        ])
        _post(stack, "/_local/invoke/RollupFunction",
              {"source": "aws.scheduler", "time": f"{monday + timedelta(days=7)}T01:00:00Z"})
        deadline = time.monotonic() + 90
        while not memory.list_reports("users", user)["reports"]:
            assert time.monotonic() < deadline, "the weekly rollup wrote no report"
            time.sleep(0.5)
    return Seeded(tenant, user)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with sync_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    """A fresh browser profile (empty localStorage) per test; a script error fails the test."""
    context = browser.new_context(viewport={"width": 1440, "height": 900}, locale="en-US", timezone_id="UTC")
    context.set_default_timeout(TIMEOUT_MS)
    opened = context.new_page()
    errors: list[str] = []
    opened.on("pageerror", lambda error: errors.append(str(error)))
    try:
        yield opened
    finally:
        context.close()
    assert errors == []


def open_inspector(page: Any, stack: Stack, tenant: str, path: str) -> None:
    """Enter the tenant in the settings bar, then open `path` (a deep link) as a fresh page load."""
    page.goto(stack.url + "/ui")
    page.get_by_label("Tenant", exact=True).fill(tenant)
    page.locator("#settings").get_by_role("button", name="Save").click()
    expect(page.locator("#settings-status")).to_have_text("Saved")
    page.goto(stack.url + path)


def memory_row(page: Any, text: str) -> Any:
    return page.locator("table.memories tbody tr", has_text=text)


def test_given_a_deep_link_when_opened_then_the_users_chinese_and_english_memories_show(page, stack, seeded):
    open_inspector(page, stack, seeded.tenant, f"/ui/users/{seeded.user}")

    expect(page.get_by_role("heading", name=seeded.user)).to_be_visible()
    expect(memory_row(page, "我搬到了上海")).to_be_visible()
    expect(memory_row(page, "Prefers concise answers in English")).to_be_visible()
    expect(page.locator("table.memories tbody tr")).to_have_count(5)  # the superseded 杭州 is history, not current
    expect(memory_row(page, "我搬到了上海").locator(".field-name")).to_have_text("city")
    expect(memory_row(page, "我搬到了上海").get_by_role("meter", name="importance", exact=True)).to_have_attribute(
        "aria-valuenow", "85")
    assert memory_row(page, "喜欢打网球").locator("span[lang=zh]").count() >= 1
    # Opened scopes are remembered in this browser.
    expect(page.locator("#recent a", has_text=seeded.user)).to_have_attribute("aria-current", "page")


def test_the_memories_page_shows_the_tenants_retention_and_each_memorys_expiry(page, stack, seeded):
    open_inspector(page, stack, seeded.tenant, f"/ui/users/{seeded.user}")

    expect(page.locator("#retention")).to_have_text(
        "Retention: FACT kept until deleted · PREFERENCE kept until deleted · INTENT 3650 days · log 30 days")
    expect(memory_row(page, "对高才通B类感兴趣").locator(".chip-expires")).to_contain_text("expires")
    expect(memory_row(page, "我搬到了上海").locator(".chip-expires")).to_have_count(0)  # a fact: kept


def test_given_a_superseded_field_when_its_history_is_opened_then_the_timeline_shows_both_versions(
        page, stack, seeded):
    open_inspector(page, stack, seeded.tenant, f"/ui/users/{seeded.user}")

    memory_row(page, "我搬到了上海").get_by_role("button", name="History of city").click()

    items = page.locator(".timeline .timeline-item")
    expect(items).to_have_count(2)
    expect(items.nth(0)).to_contain_text("我搬到了上海")
    expect(items.nth(0).locator(".chip-current")).to_be_visible()
    expect(items.nth(1)).to_contain_text("我住在杭州")
    expect(items.nth(1).locator(".chip-superseded")).to_be_visible()


def test_given_a_date_in_the_history_then_the_version_known_that_day_is_marked_with_its_provenance(
        page, stack, seeded):
    open_inspector(page, stack, seeded.tenant, f"/ui/users/{seeded.user}")
    memory_row(page, "我搬到了上海").get_by_role("button", name="History of city").click()
    items = page.locator(".timeline .timeline-item")
    expect(items).to_have_count(2)

    page.get_by_label("As of", exact=True).fill("2025-06-01T12:00:00")  # the browser's zone: UTC

    expect(items.nth(1)).to_have_class(re.compile(r"\bas-of\b"))
    expect(items.nth(0)).to_have_class(re.compile(r"\bnot-as-of\b"))
    expect(page.locator(".as-of-note")).to_contain_text("version 1")
    expect(items.nth(0).locator(".provenance")).to_have_text("saved directly")  # the local stack: no token
    page.get_by_label("As of", exact=True).fill("2025-01-01T00:00:00")
    expect(page.locator(".as-of-note")).to_contain_text("none of these versions")


def test_given_a_date_in_the_search_playground_then_the_memories_known_then_are_searched(page, stack, seeded):
    open_inspector(page, stack, seeded.tenant, f"/ui/users/{seeded.user}/search")

    page.get_by_label("Query", exact=True).fill("住在 杭州 上海")
    page.get_by_label("Minimum score", exact=True).fill("0")
    page.get_by_label("As of", exact=True).fill("2025-06-01T12:00:00")
    page.locator("#search-form").get_by_role("button", name="Search").click()

    expect(page.locator(".result-summary")).to_contain_text("as of")
    expect(page.locator(".result-list")).to_contain_text("我住在杭州")
    expect(page.locator(".result-list")).not_to_contain_text("我搬到了上海")


def test_given_a_query_when_searched_then_each_result_draws_its_score_breakdown(page, stack, seeded):
    open_inspector(page, stack, seeded.tenant, f"/ui/users/{seeded.user}/search")

    page.get_by_label("Query", exact=True).fill("网球 tennis 上海")
    page.get_by_label("Minimum score", exact=True).fill("0")
    page.locator("#search-form").get_by_role("button", name="Search").click()

    results = page.locator(".result-list > li")
    expect(results.first).to_be_visible()
    first = results.first
    assert first.get_by_role("meter").count() == 9  # eight parts and the final score
    final = first.get_by_role("meter", name="final", exact=True)
    shown = float(first.locator(".score").inner_text())
    assert float(final.get_attribute("aria-valuenow")) == pytest.approx(shown, abs=0.006)
    width = final.locator(".bar-fill").evaluate("el => el.getBoundingClientRect().width")
    track = final.evaluate("el => el.getBoundingClientRect().width")
    assert 0 < width <= track
    expect(page.locator(".result-list")).to_contain_text("喜欢打网球")


def test_given_a_hot_memory_entry_when_edited_then_the_api_has_the_new_value(page, stack, seeded):
    from agent_memory_client import MemoryClient

    open_inspector(page, stack, seeded.tenant, f"/ui/users/{seeded.user}/hot-memory")
    page.get_by_role("button", name="Edit status 申请进度").click()
    expect(page.get_by_label("Key", exact=True)).to_have_value("申请进度")

    page.get_by_label("Value", exact=True).fill("已递交，等待审批")
    page.get_by_label("Priority", exact=True).fill("7")
    page.locator("#hot-editor").get_by_role("button", name="Save entry").click()

    expect(page.locator("#hot-editor .ok")).to_contain_text("Saved status")
    row = page.locator('table.hot tr[data-key="申请进度"]')
    expect(row).to_contain_text("已递交，等待审批")
    expect(row).to_contain_text("7")
    with MemoryClient(stack.url, tenant_id=seeded.tenant, max_retries=0) as memory:
        status = memory.get_hot_memory("users", seeded.user)["status"]
    assert [(e["key"], e["value"], e["priority"]) for e in status] == [("申请进度", "已递交，等待审批", 7)]


def test_given_a_rolled_up_week_when_reports_are_opened_then_the_report_shows(page, stack, seeded):
    open_inspector(page, stack, seeded.tenant, f"/ui/users/{seeded.user}/reports")

    report = page.locator("article.report")
    expect(report).to_have_count(1)
    expect(report).to_contain_text("高才通")
    expect(report.locator(".metrics")).to_contain_text("messages")


def test_given_a_message_when_the_inject_preview_runs_then_blocks_are_measured_against_the_budget(
        page, stack, seeded):
    open_inspector(page, stack, seeded.tenant, f"/ui/users/{seeded.user}/inject")

    page.get_by_label("Current user message", exact=True).fill("我适合高才通吗？")
    page.locator("#inject-form").get_by_role("button", name="Preview").click()

    blocks = page.locator("table.blocks tbody tr")
    expect(blocks.first).to_be_visible()
    types = blocks.evaluate_all("rows => rows.map(r => r.dataset.block)")
    assert {"hot_memory", "user_memory"} <= set(types)
    user_memory = page.locator('table.blocks tr[data-block="user_memory"]')
    expect(user_memory.locator(".chip-p0")).to_have_text("P0")
    meter = user_memory.get_by_role("meter")
    assert int(meter.get_attribute("aria-valuenow")) > 0
    available = re.search(r"of ([\d,]+) available", page.locator(".result-summary").inner_text())
    assert available and int(meter.get_attribute("aria-valuemax")) == int(available[1].replace(",", ""))
    expect(page.locator(".stacked .segment")).not_to_have_count(0)
    page.get_by_text("What the model gets").click()
    expect(page.locator(".rendered")).to_contain_text("我搬到了上海")


def test_given_an_invalid_id_or_an_unknown_page_then_the_error_is_shown(page, stack, seeded):
    open_inspector(page, stack, seeded.tenant, "/ui/users/bad%20id")

    alert = page.get_by_role("alert")
    expect(alert).to_contain_text("422 validation_error")
    expect(alert).to_contain_text("user_id")

    page.goto(stack.url + f"/ui/users/{seeded.user}/no-such-tab")
    expect(page.get_by_role("heading", name="No such page")).to_be_visible()


def test_given_another_tenant_then_the_user_has_no_memories(page, stack, seeded):
    open_inspector(page, stack, f"other-{seeded.tenant}", f"/ui/users/{seeded.user}")

    expect(page.locator("table.memories")).to_contain_text("No current memories")


def test_the_screenshot_shows_memories_and_a_history(page, stack, seeded, tmp_path):
    open_inspector(page, stack, seeded.tenant, f"/ui/users/{seeded.user}")
    memory_row(page, "我搬到了上海").get_by_role("button", name="History of city").click()
    expect(page.locator(".timeline .timeline-item")).to_have_count(2)
    page.evaluate("document.fonts.ready.then(() => true)")

    path = SCREENSHOT if os.environ.get("UPDATE_SCREENSHOT") else tmp_path / "inspector.png"
    path.parent.mkdir(parents=True, exist_ok=True)
    page.set_viewport_size({"width": 1440, "height": 640})
    page.screenshot(path=str(path), full_page=True)  # the page's own height: no empty band below

    assert Path(path).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
