"""The episode loop and the scheduler with a scripted policy, on real podman sandboxes, the real
terminal-coding taskpack and verifier, and a real store."""

from __future__ import annotations

import asyncio
from dataclasses import replace

import numpy as np
import pytest
from transformers import AutoTokenizer

from ptrain.engine.scripted import ScriptedEngine
from ptrain.eval import Census, task_outcomes
from ptrain.rollout.chat import ChatFormat
from ptrain.rollout.config import RolloutConfig
from ptrain.rollout.gold import gold_replies
from ptrain.rollout.lockstep import Barrier
from ptrain.rollout.loop import ELIDED, EpisodeLimits, run_episode
from ptrain.rollout.scheduler import Rollout
from ptrain.sandbox import PoolSet
from ptrain.store import Store
from ptrain.taskpack import load

pytestmark = pytest.mark.podman
TASKS = ("text/count-lines", "files-shell/create-hello")


@pytest.fixture(scope="module")
def pack():
    return load("terminal-coding")


@pytest.fixture(scope="module")
def fmt(model_path):
    return ChatFormat(AutoTokenizer.from_pretrained(model_path), "bash")


@pytest.fixture(scope="module")
def tasks(pack):
    by_id = {t.id: t for t in pack.tasks("train")}
    return [by_id[t] for t in TASKS]


def config(**overrides) -> RolloutConfig:
    base = RolloutConfig(task_ids=TASKS, samples=2, concurrency=2, max_new_tokens=256, flush_interval_s=0.5)
    return replace(base, **overrides)


async def roll(tmp_path, pack, engine, fmt, cfg, **pool_args):
    store = Store(tmp_path / "run", create=True)
    async with PoolSet(size=2, max_active=cfg.concurrency + cfg.verify_concurrency, **pool_args) as pools:
        report = await Rollout(cfg, store, pack, engine, fmt, pools).run()
    return store, report


async def test_gold_episodes_are_stored_in_groups_verified_and_score_one(tmp_path, podman_url, pack, fmt, tasks):
    engine = ScriptedEngine(fmt, gold_replies(fmt, pack, tasks))
    store, report = await roll(tmp_path, pack, engine, fmt, config())
    assert report.statuses == {"ok": 4} and report.verified == 4 and report.passed == 4
    groups = list(store.groups())
    assert sorted(g.task_id for g in groups) == sorted(TASKS)
    for group in groups:
        assert list(group.rewards) == [1.0, 1.0]
        for episode in group.episodes:
            assert episode.metadata["finish"] == "submitted" and episode.metadata["turns"] == 2
            assert episode.artifact_sha256 and episode.tool_calls[0]["name"] == "bash"
            model = fmt.render_text(episode.token_ids[episode.loss_mask])
            assert "```bash" in model and "submit" in model and "<|im_start|>" not in model
            assert fmt.render_text(episode.token_ids).count("<|im_start|>tool") == 1


async def test_a_rerun_produces_only_the_missing_episodes(tmp_path, podman_url, pack, fmt, tasks):
    engine = ScriptedEngine(fmt, gold_replies(fmt, pack, tasks))
    await roll(tmp_path, pack, engine, fmt, config(task_ids=TASKS[:1]))
    store, report = await roll(tmp_path, pack, engine, fmt, config())
    assert (report.planned, report.skipped) == (2, 2)
    _, again = await roll(tmp_path, pack, engine, fmt, config())
    assert (again.planned, again.skipped) == (0, 4)
    pairs = [(e.task_id, e.sample_index) for e in store.episodes()]
    assert sorted(pairs) == sorted((t, i) for t in TASKS for i in range(2))
    assert len(store.latest_verdicts()) == 4


async def test_malformed_turns_become_error_observations_and_the_turn_limit_truncates(tmp_path, podman_url, pack, fmt):
    replies = ["no block here", "```bash\necho unclosed", "```bash\necho one\n```\n```bash\necho two\n```"]
    engine = ScriptedEngine(fmt, lambda prompt, turn: replies[turn % len(replies)])
    store, report = await roll(tmp_path, pack, engine, fmt, config(task_ids=TASKS[:1], samples=1, max_turns=3))
    (episode,) = store.episodes()
    assert episode.status == "truncated" and episode.metadata["finish"] == "max_turns"
    tool_messages = [m["content"] for m in episode.transcript if m["role"] == "tool"]
    assert "No tool call found" in tool_messages[0] and "```bash" in tool_messages[0]
    assert "one" in tool_messages[2] and "not run" in tool_messages[2]
    assert report.verified == 1 and report.passed == 0  # verified all the same: the workspace is unchanged


async def test_an_engine_failure_is_retried_and_recorded_not_blamed_on_the_model(
    tmp_path, podman_url, pack, fmt, tasks
):
    engine = ScriptedEngine(fmt, gold_replies(fmt, pack, tasks), fail_on={1})
    store, report = await roll(tmp_path, pack, engine, fmt, config(task_ids=TASKS[:1], samples=1))
    (episode,) = store.episodes()
    assert report.infra_retries == 1 and episode.status == "ok" and episode.metadata["attempts"] == 2

    always = ScriptedEngine(fmt, gold_replies(fmt, pack, tasks), fail_on=set(range(1, 100)))
    store, report = await roll(tmp_path / "b", pack, always, fmt, config(task_ids=TASKS[:1], samples=1, retries=1))
    (episode,) = store.episodes()
    assert episode.status == "error" and episode.error_type == "EngineError"
    assert episode.metadata["trainable"] is False and not episode.artifact_sha256
    assert report.verified == 0


async def test_a_resumed_rollout_retries_stored_infrastructure_errors_up_to_retries(
    tmp_path, podman_url, pack, fmt, tasks
):
    always = ScriptedEngine(fmt, gold_replies(fmt, pack, tasks), fail_on=set(range(1, 100)))
    cfg = config(task_ids=TASKS[:1], samples=1, retries=2)
    await roll(tmp_path, pack, always, fmt, replace(cfg, retries=0))  # one attempt, stored as an error
    store, report = await roll(tmp_path, pack, ScriptedEngine(fmt, gold_replies(fmt, pack, tasks)), fmt, cfg)
    assert report.infra_retried_from_store == 1 and report.passed == 1
    assert sorted(e.status for e in store.episodes()) == ["error", "ok"]
    (group,) = store.groups()
    assert group.episodes[0].status == "ok" and list(group.rewards) == [1.0]  # the retry replaces the error
    census = Census()
    task_outcomes(store, census)
    assert census.infra_errors == {} and census.retried == 1 and census.pass_at_1_all == 1.0

    for _ in range(3):  # the first run and two resumed ones: retries=2 allows no more
        await roll(tmp_path / "b", pack, always, fmt, cfg)
    _, last = await roll(tmp_path / "b", pack, always, fmt, cfg)
    assert last.planned == 0
    census = Census()
    task_outcomes(Store(tmp_path / "b" / "run"), census)
    assert census.infra_error_count == 1 and census.pass_at_1_all == 0.0 and census.infra_error_rate == 1.0


async def test_a_workspace_too_large_to_collect_is_the_models_failure_scored_zero(tmp_path, podman_url, pack, fmt):
    replies = [
        "```bash\ntruncate -s 50G /workspace/huge\n```",
        '<tool_call>{"name": "submit", "arguments": {}}</tool_call>',
    ]
    engine = ScriptedEngine(fmt, lambda prompt, turn: replies[min(turn, 1)])
    store, report = await roll(tmp_path, pack, engine, fmt, config(task_ids=TASKS[:1], samples=1, max_turns=2))
    (episode,) = store.episodes()
    assert episode.status != "error" and episode.metadata["trainable"] is True and not episode.artifact_sha256
    assert "too large" in episode.metadata["uncollected"]
    (verdict,) = store.latest_verdicts().values()
    assert verdict.reward == 0.0 and verdict.details["model_failure"] is True
    census = Census()
    task_outcomes(store, census)
    assert census.scored == 1 and census.infra_error_count == 0


async def test_a_sandbox_that_disappears_mid_episode_is_retried_in_a_new_one(tmp_path, podman_url, pack, fmt, tasks):
    pools_seen: list[PoolSet] = []
    gold = gold_replies(fmt, pack, tasks)
    killed = []

    def reply(prompt, turn):
        if not killed:  # remove the container the episode is running in, as a crashed host would
            for pool in pools_seen[0].pools.values():
                for sandbox in pool.active:
                    sandbox.container.remove(force=True)
                    killed.append(sandbox.name)
        return gold(prompt, turn)

    engine = ScriptedEngine(fmt, reply)
    cfg = config(task_ids=TASKS[:1], samples=1, verify=False)
    store = Store(tmp_path / "run", create=True)
    async with PoolSet(size=1, max_active=2) as pools:
        pools_seen.append(pools)
        report = await Rollout(cfg, store, pack, engine, fmt, pools).run()
    (episode,) = store.episodes()
    assert killed and report.infra_retries == 1 and episode.status == "ok"


async def test_a_tool_that_raises_ends_its_episode_as_an_infrastructure_error(tmp_path, podman_url, pack, fmt, tasks):
    class Exploding:
        name = "bash"
        schema = next(tool.schema for tool in pack.tools() if tool.name == "bash")

        async def __call__(self, sandbox, arguments):
            raise RuntimeError("taskpack bug")

    class BrokenPack:
        def __getattr__(self, name):
            return getattr(pack, name)

        def tools(self):
            return [Exploding(), *(tool for tool in pack.tools() if tool.name != "bash")]

    engine = ScriptedEngine(fmt, gold_replies(fmt, pack, tasks))
    store, report = await roll(tmp_path, BrokenPack(), engine, fmt, config(task_ids=TASKS[:1], samples=1))
    (episode,) = store.episodes()
    assert episode.status == "error" and episode.error_type == "ToolError" and "taskpack bug" in episode.error_message
    assert episode.tool_calls[0]["crashed"] == "RuntimeError: taskpack bug"


async def test_a_long_episode_is_compacted_into_a_new_segment_within_the_window(podman_url, pack, fmt, tasks):
    engine = ScriptedEngine(fmt, lambda p, t: "```bash\nseq 1 400\n```", context_window=1500)
    limits = EpisodeLimits(max_turns=6, max_new_tokens=64, keep_recent_turns=1)
    async with PoolSet(size=1) as pools, pools.sandbox(pack.image) as sandbox:
        await pack.setup(tasks[0], sandbox)
        trace = await run_episode(tasks[0], pack, sandbox, engine, fmt, limits)
    assert trace.status == "truncated" and trace.finish == "max_turns" and len(trace.segments) > 1
    starts = [*trace.segments, len(trace.token_ids)]
    for start, end in zip(starts, starts[1:], strict=False):
        assert end - start <= 1500  # every segment fits the window
        segment = trace.token_ids[start:end]
        assert fmt.render_text(segment).startswith("<|im_start|>system")  # each is a whole sequence
    later = fmt.render_text(trace.token_ids[trace.segments[1] :])
    assert ELIDED in later
    mask = np.array(trace.loss_mask)
    assert not mask[trace.segments[1] : trace.segments[1] + 10].any()  # re-rendered history is not trained


async def test_the_state_note_reports_the_directory_and_changed_files(podman_url, pack, fmt, tasks):
    engine = ScriptedEngine(fmt, lambda p, t: "```bash\nmkdir -p out && cd out && echo hi > new.txt\n```")
    limits = EpisodeLimits(max_turns=1, state_note=True)
    async with PoolSet(size=1) as pools, pools.sandbox(pack.image) as sandbox:
        await pack.setup(tasks[0], sandbox)
        trace = await run_episode(tasks[0], pack, sandbox, engine, fmt, limits)
    note = trace.transcript[-1]["content"]
    assert "[state] cwd: /workspace/out" in note and "out/new.txt" in note


async def test_lockstep_episodes_take_their_turns_together(tmp_path, podman_url, pack, fmt, tasks):
    engine = ScriptedEngine(fmt, gold_replies(fmt, pack, tasks))
    store, report = await roll(tmp_path, pack, engine, fmt, config(mode="lockstep", concurrency=4))
    assert report.statuses == {"ok": 4} and report.passed == 4


async def test_the_barrier_releases_when_the_last_party_arrives_or_leaves():
    barrier, order = Barrier(), []
    for _ in range(3):
        barrier.join()

    async def party(i, leave_early):
        if leave_early:
            await asyncio.sleep(0.01)
            barrier.leave()
            return
        await barrier.wait()
        order.append(i)

    await asyncio.wait_for(asyncio.gather(party(0, False), party(1, False), party(2, True)), 5)
    assert sorted(order) == [0, 1]


def test_the_gold_engine_replays_the_requests_task_even_when_tasks_share_an_instruction(pack, fmt):
    """Every mutant of a project has one of five instructions: the prompt cannot say which mutant it is."""
    mutants = [t for t in pack.tasks("train") if t.category == "python-bugfix"]
    first = mutants[0]
    twin = next(
        t for t in mutants[1:] if t.instruction == first.instruction and t.metadata["fix"] != first.metadata["fix"]
    )
    gold = gold_replies(fmt, pack, [first, twin])
    prompt = f"<|im_start|>user\n{first.instruction}<|im_end|>"
    for task in (first, twin):
        assert task.metadata["fix"].splitlines()[2] in gold(prompt, 1, task.id)
    assert "I do not know" in gold("an unrelated prompt", 0)
