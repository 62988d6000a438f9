"""``Auto(prior=traces)``: a dispatcher that starts from traffic already seen, over real HTTP."""

from __future__ import annotations

import random
from pathlib import Path

import anyio
import pytest

import fairstream
from fairstream import Auto, Dispatcher, Recorder, StreamClient, StreamTrace, analyze, load_jsonl
from fairstream._dispatch.policies._tail import most_running
from tests.conftest import ServerFactory

MSG = [{"role": "user", "content": "hi"}]
LENGTHS = random.Random(3).choices([4, 8, 24, 40], k=24)


async def _burst(
    base_url: str, model: str, dispatcher: Dispatcher | None, lengths: list[int] = LENGTHS
) -> list[StreamTrace]:
    """The same requests (24 unless ``lengths``) at once, naively or through ``dispatcher``."""
    recorder = Recorder()
    async with StreamClient(base_url, recorder=recorder) as client:

        async def one(n: int) -> None:
            kwargs = {"model": model, "messages": MSG, "max_tokens": n, "ignore_eos": True}
            if dispatcher is None:
                await client.complete(**kwargs)
            else:
                await dispatcher.submit(lambda: client.complete(**kwargs), expected_tokens=n)

        async with anyio.create_task_group() as tg:
            for n in lengths:
                tg.start_soon(one, n)
    return recorder.traces


def _sent_before_any_start(traces: list[StreamTrace]) -> int:
    first = min(t.first_content for t in traces if t.first_content is not None)
    return sum(1 for t in traces if t.sent is not None and t.sent < first)


async def _refilling(base_url: str, model: str) -> list[StreamTrace]:
    """Traffic that shows a continuous server's refills: a second wave sent as soon as the
    first wave's shortest request ends, while its long ones still run."""
    recorder = Recorder()
    first_done = anyio.Event()
    async with StreamClient(base_url, recorder=recorder) as client:

        async def one(n: int) -> None:
            await client.complete(model=model, messages=MSG, max_tokens=n, ignore_eos=True)
            first_done.set()

        async with anyio.create_task_group() as tg:
            for n in [2] + [40] * 11:
                tg.start_soon(one, n)
            await first_done.wait()
            for n in [8] * 12:
                tg.start_soon(one, n)
    return recorder.traces


async def test_warm_auto_fills_a_continuous_server_at_once_where_cold_auto_ramps(
    serve: ServerFactory,
) -> None:
    async with serve(mode="continuous", max_num_seqs=64) as server:
        model = server.config.model
        prior = await _refilling(server.base_url, model)
        warm = Auto(prior=prior)
        assert warm.kind == "continuous"
        # the proved slots, and one request probing above them: at the peak, slow start could
        # never show a slot more (it grows only on a start above the peak)
        assert warm.peak == warm.limit() - 1 == most_running(prior) > Auto().start
        assert not warm.slow_start
        async with Dispatcher(warm) as d:
            warm_traces = await _burst(server.base_url, model, d)
        async with Dispatcher(cold := Auto()) as d:
            cold_traces = await _burst(server.base_url, model, d)
    assert all(t.outcome == "ok" for t in warm_traces + cold_traces)
    # cold: the burst's short band (up to 32 tokens here, at most ``first_wave``) at once, the
    # rest as first tokens prove more slots; warm: what it knows, all of it
    band = min(sum(1 for n in LENGTHS if n <= 32), cold.first_wave)
    assert _sent_before_any_start(cold_traces) == band < len(LENGTHS)
    assert _sent_before_any_start(warm_traces) >= min(warm.peak, len(LENGTHS)) - 1
    assert warm.kind == "continuous"  # live traffic did not overturn it


async def test_one_burst_that_fit_the_server_proves_that_many_slots(
    serve: ServerFactory,
) -> None:
    """One burst shows no refill, so static and continuous look alike; either way the server
    ran that many at once, and a warm dispatcher sends that many at once."""
    async with serve(mode="continuous", max_num_seqs=64) as server:
        prior = await _burst(server.base_url, server.config.model, None)
        warm = Auto(prior=prior)
        assert most_running(prior) >= len(LENGTHS) - 1
        async with Dispatcher(warm) as d:
            traces = await _burst(server.base_url, server.config.model, d)
    assert all(t.outcome == "ok" for t in traces)
    assert _sent_before_any_start(traces) >= most_running(prior) - 1 > Auto().start


async def test_warm_auto_takes_the_batch_size_of_a_static_server(serve: ServerFactory) -> None:
    async with serve(mode="static", batch_size=6, release="batch_end") as server:
        prior = await _burst(server.base_url, server.config.model, None)
        warm = Auto(prior=prior)
        assert (warm.kind, warm.batch_size) == ("static", 6), warm.changes
        async with Dispatcher(warm) as d:
            traces = await _burst(server.base_url, server.config.model, d)
    assert all(t.outcome == "ok" for t in traces)
    assert _sent_before_any_start(traces) == 6  # one batch, not a slow start's guess
    assert warm.kind == "static", warm.changes  # the prior's other clock did not confuse it


@pytest.mark.alone  # a makespan ratio of two real-timed runs: not beside other load
async def test_warm_auto_sends_a_bursts_long_half_once_its_short_batch_ends(
    serve: ServerFactory,
) -> None:
    """A static server whose batch holds the whole burst reads, from a burst's traces, as B=32
    at least; a warm dispatcher sends the short half as one batch, then the long half when it
    ends. It held the long half a whole run more, waiting for arrivals that never came: 1.67x
    naive's makespan on the demo's B=48 server. ``(8 + 128) / 128`` steps is the price of the
    short batch."""
    lengths = [8, 128] * 16
    random.Random(5).shuffle(lengths)
    async with serve(mode="static", batch_size=48, release="batch_end") as server:
        url, model = server.base_url, server.config.model
        prior = await _burst(url, model, None, lengths)
        warm = Auto(prior=prior)
        assert warm.kind == "static", warm.changes
        async with Dispatcher(warm) as d:
            traces = await _burst(url, model, d, lengths)
    assert all(t.outcome == "ok" for t in traces)
    assert _span(traces) <= 1.25 * _span(prior), (_span(traces), _span(prior))


def _span(traces: list[StreamTrace]) -> float:
    start = min(t.enqueued if t.enqueued is not None else t.sent or 0.0 for t in traces)
    return max(t.end or 0.0 for t in traces) - start


def test_no_usable_prior_is_a_cold_start() -> None:
    failed = StreamTrace(request_id="x", outcome="error", sent=0.0)
    for prior in ([], [failed]):
        auto = Auto(prior=prior)
        assert (auto.kind, auto.peak, auto.limit()) == ("unknown", 0, auto.start)


def _t(first: float, last: float) -> StreamTrace:
    return StreamTrace(request_id=f"{first}-{last}", first_content=first, last_content=last)


@pytest.mark.parametrize(
    ("spans", "most"),
    [
        ([(0, 4), (1, 5), (2, 3)], 3),
        ([(0, 2), (2, 4), (4, 6)], 1),  # a slot handed over at the same instant: one running
        ([(0, 4), (1, 1), (1, 1)], 1),  # one-token answers hold no slot between two tokens
        ([(0, 1), (2, 3), (2.5, 6), (2.6, 7)], 3),
    ],
)
def test_most_running(spans: list[tuple[float, float]], most: int) -> None:
    assert most_running([_t(a, b) for a, b in spans]) == most


@pytest.mark.parametrize(
    ("overrides", "kind"),
    [({"mode": "static", "batch_size": 6}, "static"), ({"max_num_seqs": 12}, "continuous")],
    ids=["static", "continuous"],
)
async def test_a_probes_traces_warm_the_dispatcher(
    serve: ServerFactory, overrides: dict[str, object], kind: str
) -> None:
    """``probe(..., recorder=rec)`` then ``Auto(prior=rec.traces)``: what the probe found."""
    recorder = Recorder()
    async with serve(**overrides) as server:
        report = await fairstream.probe(server.base_url, server.config.model, recorder=recorder)
    warm = Auto(prior=recorder.traces)
    assert report.verdict == kind
    assert warm.kind == kind, warm.changes
    if kind == "static":
        assert warm.batch_size == 6
    else:
        # a probe runs only a few at once: slow start still offers at least `start`
        assert warm.limit() == max(Auto().start, most_running(recorder.traces))


def test_auto_does_not_judge_a_server_by_its_one_and_two_chunk_answers() -> None:
    """Real traces, captured over HTTP from a 64-slot continuous reference server (a
    160-request burst, cold ``auto``): the first 16 answers, 1
    and 2 tokens each, that a busy 2-core client read late and bunched. A looser detector
    reads them as a server that serves one request at a time (a request must be passed over
    while waiting for that, and none was); ``auto`` judges only traces of 3 chunks or more
    (shorter ones end as they start), so it stays undecided (turned sequential on them, it
    would run one or two requests at a time on 64 slots)."""
    traces = load_jsonl(Path(__file__).parent / "data" / "cont64_burst_first_answers.jsonl")
    report = analyze(traces)
    assert not (report.verdict == "sequential" and report.confidence >= 0.7), report.summary
    auto = Auto()
    auto.recheck(traces)
    assert auto.kind == "unknown"
