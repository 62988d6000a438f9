"""A batch proves B only when every member of it ran at once as we read it.

A busy client reads a batch of one- and two-token answers interleaved: some members' ends
before others' first tokens. 16 read as 10 running at once made ``auto`` take B = 10 exact on
a B=16 server (a burst of 160).
"""

from __future__ import annotations

from fairstream._dispatch.policies.auto._batches import Batches


def _batch(members: int, ended_early: int) -> Batches:
    """A batch of ``members`` sent at 0.0; from the third start on, each start read after the
    end of an earlier member, ``ended_early`` times."""
    b, running, ended = Batches(4), 0, 0
    for jid in range(members):
        if jid >= 2 and ended < ended_early:
            running -= 1
            b.on_end(ended, running)
            ended += 1
        running += 1
        b.on_start(jid, 2.0, running, 0.0, 1.0 + jid * 0.001)
    assert b.peak == members - ended_early
    return b


def test_a_batch_read_whole_proves_its_size() -> None:
    assert _batch(16, 0).full({99: 0.0}, 8, 0.5) == 16


def test_a_batch_read_interleaved_proves_nothing() -> None:
    assert _batch(16, 6).full({99: 0.0}, 8, 0.5) is None


def test_nothing_waited_proves_nothing() -> None:
    assert _batch(16, 0).full({}, 8, 0.5) is None
