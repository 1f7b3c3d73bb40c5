"""One rule for the table's TTL attribute: whole epoch seconds rounded up (an item never expires before its
moment), whatever the writer holds the moment as; "now" is truncated, so the item is live through its last
second."""

from __future__ import annotations

from datetime import UTC, datetime

from agent_memory.adapters.dynamodb.items import epoch_now, ttl_seconds

MOMENT = datetime(2026, 1, 1, 0, 0, 0, 250000, tzinfo=UTC)


def test_a_datetime_and_the_same_epoch_seconds_give_the_same_rounded_up_ttl():
    assert ttl_seconds(MOMENT) == ttl_seconds(MOMENT.timestamp()) == int(MOMENT.timestamp()) + 1


def test_a_whole_second_is_kept_as_it_is_and_nothing_is_before_the_epoch():
    assert ttl_seconds(1_700_000_000.0) == 1_700_000_000
    assert ttl_seconds(-5.5) == 0


def test_an_item_is_live_until_the_second_of_its_expiry_is_over():
    expires = ttl_seconds(MOMENT)

    assert expires > epoch_now(MOMENT)  # live at its own moment
    assert not expires > epoch_now(datetime.fromtimestamp(expires, UTC))
