"""Dates named in a search query: "in July 2023", "on October 13, 2023", "2023年5月", "去年".

A query that names a period is about what was said then, so ranking scores a memory's time by how close
its creation lies to that period instead of by plain recency. Memories are dated when they were said, and
people talk about a day for a while afterwards ("last weekend", "上个月"), so the period is widened by a few
days after its end. Only explicit calendar expressions and a few unambiguous relative ones are read: a bare
"may" is a verb, a bare "march" a walk, and a period is taken only where the words leave no doubt.
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

MONTHS = {name.lower(): number for number, name in enumerate(calendar.month_name) if name}
MONTHS.update({name.lower(): number for number, name in enumerate(calendar.month_abbr) if name})
MONTHS["sept"] = 9
_MONTH = r"(?P<month>" + "|".join(sorted(MONTHS, key=len, reverse=True)) + r")\.?"
_DAY = r"(?P<day>[0-3]?\d)(?:st|nd|rd|th)?"
_YEAR = r"(?P<year>(?:19|20)\d\d)"

# English, most specific first; each pattern's groups are a subset of year, month, day.
_ENGLISH = [
    re.compile(rf"\b{_MONTH}\s+{_DAY},?\s+{_YEAR}\b", re.IGNORECASE),  # October 13, 2023
    re.compile(rf"\b{_DAY}\s+(?:of\s+)?{_MONTH},?\s+{_YEAR}\b", re.IGNORECASE),  # 13 October 2023
    re.compile(rf"\b{_MONTH},?\s+(?:of\s+)?{_YEAR}\b", re.IGNORECASE),  # July 2023
    re.compile(rf"\b(?:in|during|since|by|until|before|after|early|mid|late)\s+{_YEAR}\b", re.IGNORECASE),
    # A month with no year only after a word that makes it a date: "in May", "early June".
    re.compile(rf"\b(?:in|during|since|until|before|after|early|mid|late|of)\s+(?:-\s*)?{_MONTH}\b(?!\s+\d)",
               re.IGNORECASE),
]
_CHINESE = [
    re.compile(r"(?P<year>(?:19|20)\d\d)\s*年\s*(?P<month>1[0-2]|0?[1-9])\s*月\s*(?P<day>[0-3]?\d)\s*[日号]"),
    re.compile(r"(?P<year>(?:19|20)\d\d)\s*年\s*(?P<month>1[0-2]|0?[1-9])\s*月"),
    re.compile(r"(?<!\d)(?P<month>1[0-2]|0?[1-9])\s*月\s*(?P<day>[0-3]?\d)\s*[日号]"),
    re.compile(r"(?P<year>(?:19|20)\d\d)\s*年(?!\s*\d)"),
]
# Relative periods, measured back from the time of the search.
_RELATIVE: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"\byesterday\b|昨天", re.IGNORECASE), "yesterday"),
    (re.compile(r"\blast\s+week(?:end)?\b|上周|上个?星期|上个?礼拜", re.IGNORECASE), "last_week"),
    (re.compile(r"\blast\s+month\b|上个?月", re.IGNORECASE), "last_month"),
    (re.compile(r"\blast\s+year\b|去年", re.IGNORECASE), "last_year"),
]
# What is said about a period keeps coming up for a while after it ends.
AFTERWARDS = timedelta(days=7)


@dataclass(frozen=True)
class TimeCue:
    """A period a query names: [start, end), with the words it was read from. `every_year`: the words
    named no year ("in June"), so that month of any year is meant."""

    start: datetime
    end: datetime
    text: str
    every_year: bool = False

    def closeness(self, when: datetime, half_life_days: float) -> float:
        """1.0 inside the period or shortly after it; outside, halving every `half_life_days`."""
        if not self.every_year:
            return _closeness(self.start, self.end, when, half_life_days)
        best = 0.0
        for year in (when.year - 1, when.year, when.year + 1):
            shift = year - self.start.year
            try:
                start, end = self.start.replace(year=year), self.end.replace(year=self.end.year + shift)
            except ValueError:  # 29 February in another year
                continue
            best = max(best, _closeness(start, end, when, half_life_days))
        return best


def _closeness(start: datetime, end: datetime, when: datetime, half_life_days: float) -> float:
    if start <= when < end + AFTERWARDS:
        return 1.0
    gap = start - when if when < start else when - (end + AFTERWARDS)
    return float(0.5 ** (gap.total_seconds() / 86400 / half_life_days))


def time_cue(query: str, now: datetime) -> TimeCue | None:
    """The first period the query names, or None. A month (or day) without a year is placed in the latest
    year it has begun by `now`, and matches that month of any year."""
    for pattern in (*_ENGLISH, *_CHINESE):
        found = pattern.search(query)
        if found is None:
            continue
        groups = found.groupdict()
        period = _period(groups, now)
        if period is not None:
            return TimeCue(period[0], period[1], found.group(0).strip(), every_year=groups.get("year") is None)
    for pattern, name in _RELATIVE:
        found = pattern.search(query)
        if found is not None:
            start, end = _relative(name, now)
            return TimeCue(start, end, found.group(0).strip())
    return None


def _period(groups: dict[str, str | None], now: datetime) -> tuple[datetime, datetime] | None:
    month_text, day_text, year_text = groups.get("month"), groups.get("day"), groups.get("year")
    month = None if month_text is None else int(month_text) if month_text.isdigit() else MONTHS[month_text.lower()]
    year = int(year_text) if year_text else None
    day = int(day_text) if day_text else None
    if month is None:
        if year is None:
            return None
        return _utc(year, 1, 1), _utc(year + 1, 1, 1)
    if year is None:  # the latest such month (or day) that has begun
        year = now.year if (month, day or 1) <= (now.month, now.day if day else 1) else now.year - 1
        while day is not None and day == 29 and month == 2 and not calendar.isleap(year):
            year -= 1
    if day is None:
        start = _utc(year, month, 1)
        return start, _utc(year + 1, 1, 1) if month == 12 else _utc(year, month + 1, 1)
    if day < 1 or day > calendar.monthrange(year, month)[1]:
        return None  # "February 30": not a date, whatever the year
    start = _utc(year, month, day)
    return start, start + timedelta(days=1)


def _relative(name: str, now: datetime) -> tuple[datetime, datetime]:
    today = _utc(now.year, now.month, now.day)
    if name == "yesterday":
        return today - timedelta(days=1), today
    if name == "last_week":
        monday = today - timedelta(days=today.weekday())
        return monday - timedelta(days=7), monday
    if name == "last_month":
        first = _utc(now.year, now.month, 1)
        previous = _utc(now.year - 1, 12, 1) if now.month == 1 else _utc(now.year, now.month - 1, 1)
        return previous, first
    return _utc(now.year - 1, 1, 1), _utc(now.year, 1, 1)


def _utc(year: int, month: int, day: int) -> datetime:
    return datetime(year, month, day, tzinfo=UTC)
