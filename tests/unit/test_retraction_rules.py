"""The offline rules read what a user takes back (denials, withdrawals, endings) and a self-introduction whole, in
both packs and both languages; somebody else's statements, conditions and double negations take nothing back."""

from __future__ import annotations

from functools import cache

import pytest

from agent_memory.domain.models import MemoryType
from agent_memory.domain.packs import pack_named
from agent_memory.domain.text.skipped_sentences import skipped_sentences
from agent_memory.extraction import OfflineExtractor
from agent_memory.extraction.exemplars import Exemplar, ExemplarReader, ReaderSettings
from agent_memory.ports import ConversationTurn
from tests.fakes.embedders import HashingEmbedder


@cache
def extractor(pack: str) -> OfflineExtractor:
    chosen = pack_named(pack)
    return OfflineExtractor(chosen.extraction, list_fields=chosen.list_fields)


def read(pack: str, message: str) -> set[tuple[str | None, object, bool]]:
    return {(m.field, m.value, m.retraction) for m in extractor(pack).extract(ConversationTurn(user_message=message))}


@pytest.mark.parametrize(("pack", "message", "expected"), [
    ("immigration", "我不考虑高才通了，改走优才",
     {("targetCategory", "TTPS", True), ("targetCategory", "QMAS", False)}),
    ("immigration", "我对高才通已经不感兴趣了", {("targetCategory", "TTPS", True)}),
    ("immigration", "我已经不想去香港了", {("targetCategory", None, True)}),
    ("immigration", "I'm no longer interested in TTPS, switching to QMAS",
     {("targetCategory", "TTPS", True), ("targetCategory", "QMAS", False)}),
    ("immigration", "Switching from GEP to QMAS, it seems a better fit.",
     {("targetCategory", "GEP", True), ("targetCategory", "QMAS", False)}),
    ("immigration", "我已经从腾讯离职了", {("currentJobTitle", None, True), ("currentCompany", "腾讯", True)}),
    ("general", "I'm not allergic to peanuts", {("allergy", "peanuts", True)}),
    ("general", "I used to be allergic to peanuts but not anymore", {("allergy", "peanuts", True)}),
    ("general", "我对花生不过敏", {("allergy", "花生", True)}),
    ("general", "My dog passed away last year", {("pet", "dog", True)}),
    ("general", "我的狗去年去世了", {("pet", "狗", True)}),
    ("general", "I don't have any pets", {("pet", None, True)}),
    ("general", "我没有养宠物", {("pet", None, True)}),
    ("general", "I quit my job at Google", {("currentJobTitle", None, True), ("currentCompany", "Google", True)}),
    ("general", "I'm not vegetarian anymore", {("diet", "vegetarian", True)}),
])
def test_a_denial_withdrawal_or_ending_is_a_retraction_never_its_opposite(pack, message, expected):
    assert read(pack, message) == expected


def taken_back(pack: str, message: str) -> set[tuple[str | None, object]]:
    return {(field, value) for field, value, retraction in read(pack, message) if retraction}


@pytest.mark.parametrize(("pack", "message", "expected"), [
    # A withdrawal word the scheme lists did not know, or in the clause beside the scheme.
    ("immigration", "优才就放掉吧，分数不够", {("targetCategory", "QMAS")}),
    ("immigration", "算了，投资移民门槛太高", {("targetCategory", "CIES")}),
    ("immigration", "I'm letting TTPS go, the income bar is too high", {("targetCategory", "TTPS")}),
    ("immigration", "Take QMAS out of the plan, let's focus on GEP", {("targetCategory", "QMAS")}),
    ("immigration", "年底前过去不太现实了，明年再说", {("immigrationTimeline", "年底前")}),
    # A plan or a liking let go of, read by the rules that read it stated.
    ("general", "I've given up on learning the violin", {("goal", "learn the violin")}),
    ("general", "我对滑雪没兴趣了", {("preference", "滑雪")}),
    # A place or an employer the user is taken for.
    ("general", "I've never lived in Seattle", {("currentLocation", "Seattle")}),
    ("general", "我不是在阿里上班", {("currentCompany", "阿里")}),
    ("general", "No more texts please, email me instead", {("communicationChannel", "text")}),
    ("general", "生酮饮食我已经停了", {("diet", "生酮饮食")}),
])
def test_a_withdrawal_is_read_however_it_is_phrased(pack, message, expected):
    assert taken_back(pack, message) == expected


@pytest.mark.parametrize(("pack", "message"), [
    ("immigration", "I nearly gave up on GEP, but I'm sticking with it"),
    ("immigration", "A friend of mine dropped QMAS last year"),
    ("immigration", "我不会放弃高才通的"),
    ("general", "我暂时不考虑辞职"),
])
def test_a_withdrawal_nearly_made_or_somebody_elses_takes_nothing_back(pack, message):
    assert not taken_back(pack, message)


@pytest.mark.parametrize(("pack", "message"), [
    ("general", "My friend isn't allergic to nuts."),
    ("general", "If I ever quit my job I'd travel."),
    ("immigration", "如果我不走优才的话"),
    ("immigration", "我同事说他老婆不想去香港"),
    ("immigration", "我也不是不想走专才"),
    ("immigration", "It's not that I'm not interested in GEP."),
    ("general", "My sister's dog passed away."),
])
def test_somebody_elses_a_conditional_or_a_doubly_negated_statement_takes_nothing_back(pack, message):
    assert not {found for found in read(pack, message) if found[2]}


@pytest.mark.parametrize(("pack", "message", "expected"), [
    ("immigration", "Hi, I'm Daniel Wong, 35, a software engineer at Shopee based in Singapore.",
     {("name", "Daniel Wong"), ("age", 35), ("currentJobTitle", "software engineer"), ("currentCompany", "Shopee"),
      ("currentLocation", "Singapore")}),
    ("general", "Hi, I am Alex Chen, a 34-year-old data engineer living in Berlin.",
     {("preferredName", "Alex Chen"), ("age", 34), ("currentJobTitle", "data engineer"),
      ("currentLocation", "Berlin")}),
    ("immigration", "你好，我是刘佳，31岁，在上海做数据工程师。",
     {("name", "刘佳"), ("age", 31), ("currentJobTitle", "数据工程师"), ("currentLocation", "上海")}),
])
def test_a_self_introduction_is_read_whole(pack, message, expected):
    assert expected <= {(field, value) for field, value, _ in read(pack, message)}


@pytest.mark.parametrize("message", ["I'm tired today.", "Hi, I'm Canadian.", "我是程序员，"])
def test_what_is_no_name_is_not_read_as_one(message):
    assert not {field for field, _, _ in read("immigration", message)} & {"name"}


def test_a_company_phrase_is_no_company_name():
    found = read("general", "我上个月从柏林搬到了上海，现在在一家金融科技公司做数据工程师。")
    assert ("currentJobTitle", "数据工程师", False) in found
    assert "currentCompany" not in {field for field, _, _ in found}


@pytest.mark.parametrize("message", ["年收入大概在两百万左右", "我今年七十岁了。", "My wife is a doctor", "我离婚了"])
def test_a_one_sentence_turn_that_gave_a_memory_never_lists_its_sentence(message):
    memories = extractor("immigration").extract(ConversationTurn(user_message=message))
    assert memories and skipped_sentences(message, memories) == []


@pytest.mark.parametrize(("message", "kept"), [("我不会放弃优才的，只是想顺便了解一下专才", "QMAS"),
                                               ("I'm not giving up on TTPS, I just want a backup plan.", "TTPS")])
def test_a_withdrawal_word_itself_denied_withdraws_nothing(message, kept):
    found = read("immigration", message)
    assert not {memory for memory in found if memory[2]}


@pytest.mark.parametrize("message", ["听说投资移民取消了一部分资产类别",
                                     "I heard they cancelled TTPS for some applicants"])
def test_hearsay_takes_nothing_back(message):
    assert not {found for found in read("immigration", message) if found[2]}


@pytest.mark.parametrize(("message", "expected"), [
    ("西班牙语我不学了，太难坚持", ("goal", "学西班牙语", True)),
    ("I stopped learning Spanish a few months ago.", ("goal", "learn Spanish", True)),
    ("Stop sending reminders by text, I'd prefer email from now on.", ("communicationChannel", "text", True)),
    ("Stop using bullet points with me.", ("responseStyle", "bullet points", True)),
])
def test_a_practice_or_a_way_of_being_served_stopped_is_taken_back(message, expected):
    assert expected in read("general", message)


def reader_extractor() -> OfflineExtractor:
    """The general pack's rules with an exemplar reader that knows one liking (bag-of-words vectors)."""
    chosen = pack_named("general")
    reader = ExemplarReader(HashingEmbedder(dimension=512), [
        Exemplar(text="horror movies are my favourite thing", field="preference", memory_type=MemoryType.PREFERENCE,
                 value="horror movies"),
        Exemplar(text="what time is it", field="none")], ReaderSettings(neighbours=1, min_similarity=0.3))
    return OfflineExtractor(chosen.extraction, reader=reader, list_fields=chosen.list_fields)


def test_a_clause_read_by_its_likeness_to_a_liking_that_lets_it_go_takes_the_liking_back():
    said = reader_extractor().extract(ConversationTurn(user_message="horror movies are no longer my thing"))

    assert [(m.field, m.retraction) for m in said] == [("preference", True)]


@pytest.mark.parametrize("message", ["I'm not giving up on horror movies, they are my thing",
                                     "once I stop watching horror movies I will sleep better"])
def test_a_clause_like_a_liking_that_holds_on_to_it_or_lets_it_go_later_takes_nothing_back(message):
    said = reader_extractor().extract(ConversationTurn(user_message=message))

    assert not [m for m in said if m.retraction]
