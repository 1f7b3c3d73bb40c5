"""A self-introduction read whole: the common first turn gives a name, an age, a job and an employer in one run
("Hi, I'm Daniel Wong, 35, a software engineer at Shopee", "你好，我是刘佳，31岁，…"), which the field rules,
each reading its own phrasing ("my name is", "I'm 35"), leave in part. Only the fields the rules did not read
come from here."""

from __future__ import annotations

import re

from agent_memory.domain.models import ExtractedMemory
from agent_memory.extraction.fields.career import EN_JOB_WORDS, ZH_JOB_WORDS
from agent_memory.extraction.fields.personal import COUNTRIES
from agent_memory.extraction.grammar import Utterance, fact
from agent_memory.extraction.numbers import parse_number

_GREETING = r"(?:^|\b(?:Hi|Hello|Hey|Hiya|Good\s+(?:morning|afternoon|evening))(?:\s+(?:there|all|everyone))?\s*[,!.]?\s+)"
_EN_INTRO = re.compile(
    _GREETING + r"(?:I'm|I am|[Mm]y name is|[Mm]y name's|[Nn]ame's|[Tt]his is)\s+"
    r"(?P<name>[A-Z][^\W\d_]+(?:[-'][A-Z]?[^\W\d_]+)*(?:\s+[A-Z][^\W\d_]+(?:[-'][A-Z]?[^\W\d_]+)*){0,2})"
    r"(?=\s*(?:[,.!;]|$|\band\b))")
# Right after the name: ", 35," / ", a 29-year-old ..." / ". I'm 40".
_EN_AGE_AFTER = re.compile(r"^\s*[,.]?\s*(?:and\s+)?(?:I'm\s+|I am\s+)?(?P<age>[1-9]\d)\b(?!\s*(?:%|k\b|kg|cm|years?\s+of))"
                           r"|^[^.!?]{0,40}?\ban?\s+(?P<age2>[1-9]\d)[- ]year[- ]old\b")
_EN_JOB_AFTER = re.compile(
    rf"\b(?i:an?|as\s+an?)\s+(?:[1-9]\d[- ]year[- ]old\s+)?"
    rf"(?P<title>(?i:(?:[A-Za-z-]+\s+){{0,3}}?(?:{EN_JOB_WORDS.pattern})(?:\s+(?:{EN_JOB_WORDS.pattern}))*))"
    r"(?:\s+(?i:at|with|for)\s+(?P<company>[A-Z][\w&.-]*(?:\s+[A-Z][\w&.-]*){0,2}))?")
_NOT_NAMES = frozenset({*(demonym for _, _, demonym in COUNTRIES.values()), "Fine", "Good", "Great", "Okay", "Sorry",
                        "Here", "Back", "Ready", "Done", "Sure", "Single", "Married", "Divorced", "Retired", "New",
                        "Not", "Just", "Still", "Also", "From", "In", "At", "Looking", "Moving", "Planning", "Working"})

# 你好，我是刘佳，31岁，… : a Chinese name is a common surname and one or two characters.
_SURNAMES = ("王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘于蒋蔡余杜叶程苏魏吕丁任沈姚卢姜崔钟谭"
             "陆汪范金石廖贾夏韦付方白邹孟熊秦邱江尹薛闫段雷侯龙史陶黎贺顾毛郝龚邵万钱严覃武戴莫孔向汤欧")
_ZH_INTRO = re.compile(rf"(?:^|[，,。！!]\s*|(?:你好|您好|大家好|嗨|hi|Hi)\s*[，,!！]?\s*)我(?:是|叫)\s*"
                       rf"(?P<name>[{_SURNAMES}][\u4e00-\u9fff]{{1,2}})(?=\s*[，,。！!]|$)")
_ZH_AGE_AFTER = re.compile(r"^\s*[，,]\s*(?:今年)?(?P<age>[1-9]\d|[二三四五六七八九]十[一二三四五六七八九]?)\s*岁?(?=\s*[，,。！!]|$)")


def _age(said: str) -> int | None:
    number = parse_number(said)
    return int(number) if number is not None and 16 <= number <= 99 else None


def introduction(ctx: Utterance, *, name_field: str) -> list[ExtractedMemory]:
    """The name (as `name_field`), age, job title and employer of a self-introduction, if the turn opens one."""
    if ctx.zh:
        m = _ZH_INTRO.search(ctx.text)
        if m is None or ZH_JOB_WORDS.search(m["name"]):
            return []
        found = [fact(name_field, m["name"], f"姓名：{m['name']}")]
        age = _ZH_AGE_AFTER.match(ctx.text, m.end())
        if age is not None and (years := _age(age["age"])) is not None:
            found.append(fact("age", years, f"用户{years}岁"))
        return found
    m = _EN_INTRO.search(ctx.text)
    if m is None or set(m["name"].split()) & _NOT_NAMES:
        return []
    found = [fact(name_field, m["name"], f"Name: {m['name']}")]
    rest = ctx.text[m.end():]
    age = _EN_AGE_AFTER.search(rest)
    if age is not None and (years := _age(age["age"] or age["age2"])) is not None:
        found.append(fact("age", years, f"User is {years} years old"))
    sentence = re.split(r"(?<=[.!?])\s", rest, maxsplit=1)[0]
    job = _EN_JOB_AFTER.search(sentence)
    if job is not None:
        title = job["title"].strip()
        found.append(fact("currentJobTitle", title, f"Works as {title}"))
        if job["company"]:
            found.append(fact("currentCompany", job["company"], f"Works at {job['company']}"))
    return found
