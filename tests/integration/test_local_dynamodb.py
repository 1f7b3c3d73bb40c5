"""The local stack's DynamoDB Local runs in a session of its own, so a terminal's Ctrl-C cannot stop it early."""

from __future__ import annotations


def test_dynamodb_local_runs_in_a_session_of_its_own_so_a_terminal_ctrl_c_cannot_stop_it_early(dynamodb_local):
    """The supervisor stops the table last, after the workers' drain: a Ctrl-C in the terminal (sent to the
    foreground process group) must reach only the supervisor."""
    import os

    assert dynamodb_local.pid is not None
    assert os.getsid(dynamodb_local.pid) != os.getsid(0)
