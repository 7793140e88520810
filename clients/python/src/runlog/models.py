"""The API's views, generated from its OpenAPI document by scripts/generate.py: do not edit."""

from __future__ import annotations

from enum import Enum
from typing import Annotated, Literal, Optional, Union

from pydantic import BaseModel, ConfigDict, Field, RootModel, StringConstraints
from typing_extensions import TypeAliasType


class Agreement(BaseModel):
    """
    The gate's pass or not against a person's, over the labelled verdicts.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    accuracy: float | None
    """
    The share of them where the gate decided as the person did.
    """
    both_fail: Annotated[int, Field(ge=0)]
    """
    Neither passed.
    """
    both_pass: Annotated[int, Field(ge=0)]
    """
    The gate passed and the person approved.
    """
    gate_fail_person_pass: Annotated[int, Field(ge=0)]
    """
    The gate did not pass and the person approved.
    """
    gate_pass_person_fail: Annotated[int, Field(ge=0)]
    """
    The gate passed and the person rejected or reopened.
    """
    kappa: float | None
    """
    Cohen's kappa: agreement beyond what the two rates alone would give by chance (1 is
    full agreement, 0 chance); none when it is undefined (under two labels, or both sides
    always giving one answer).
    """
    n: Annotated[int, Field(ge=0)]
    """
    The labelled verdicts (the four cells).
    """
    unlabelled: Annotated[int, Field(ge=0)]
    """
    The verdicts no person looked at.
    """


class AlertOn(str, Enum):
    """
    What an alert is about (`on` in `[[alerts]]`).
    """

    run_failed = 'run-failed'
    """
    The run finished failed.
    """
    waiting = 'waiting'
    """
    A task waits for a person: a verdict held for review, a merge conflict with no rescue.
    """
    budget = 'budget'
    """
    A budget crossed 50, 80 or 100 % of itself.
    """
    diverged = 'diverged'
    """
    A rerun's (or an experiment's) call asked something its recording did not.
    """
    test = 'test'
    """
    Sent by `runlog alerts test`.
    """


class AlertSent(BaseModel):
    """
    A delivery of an alert (the `alert-sent` event): where, how many tries, how it ended.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    attempts: Annotated[int, Field(ge=0)]
    """
    Tries made.
    """
    error: str | None
    """
    Why it was not delivered, when it was not (the last try's error); none once delivered.
    """
    on: AlertOn
    """
    What about.
    """
    seq: Annotated[int, Field(ge=0)]
    """
    The seq of the event that raised it (0 for a test).
    """
    status: Annotated[int | None, Field(ge=0, le=65535)]
    """
    The last answer's status, when there was one.
    """
    to: str
    """
    Where it went: the receiver's scheme and host (its path may be a secret, as Slack's is).
    """


class Answered(BaseModel):
    """
    How a rerun's calls were answered, from its own events.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    divergences: list[str]
    """
    Each attempt's first divergence, in words.
    """
    live: Annotated[int, Field(ge=0)]
    """
    Calls that went to a provider.
    """
    live_cost_usd: float
    """
    What the live calls cost, where priced.
    """
    recorded: Annotated[int, Field(ge=0)]
    """
    Calls answered from the recording ($0.00).
    """
    refused: Annotated[int, Field(ge=0)]
    """
    Calls refused as they diverged.
    """


class Answers(str, Enum):
    """
    Where a rerun's model calls are answered from.
    """

    recorded = 'recorded'
    """
    Every call from the recording; a call that differs is refused and stops its attempt.
    """
    live = 'live'
    """
    Every call from the provider, as in any run.
    """
    recorded_then_live = 'recorded-then-live'
    """
    From the recording until a call differs; that call and the command's later ones go to
    the provider.
    """


class NearThreshold(BaseModel):
    """
    Within 0.05 of the threshold, either side.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    flag: Literal['near-threshold']
    margin: float
    """
    Score minus threshold.
    """


class MissingDimensions(BaseModel):
    """
    Dimensions the same evaluator reported before are missing (or none were given).
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    flag: Literal['missing-dimensions']
    missing: list[str]
    """
    The missing names; empty when the evaluator gave no dimensions at all.
    """


class ApprovedOverFailingScore(BaseModel):
    """
    A person approved the task after this failing score.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    by: str
    """
    Who.
    """
    flag: Literal['approved-over-failing-score']
    seq: Annotated[int, Field(ge=0)]
    """
    The seq of the approval.
    """


class AuditWords(BaseModel):
    """
    An eval decision in words, as `runlog audit` prints it and the web view shows it.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    consequence: str
    """
    What it led to (`done at seq 12; ready: b`), empty while it is pending.
    """
    decision: str
    """
    The gate's decision and the threshold in force (`pass at threshold 0.7`).
    """
    flags: list[str]
    """
    Why a person should look twice, each in words.
    """


class Seq(RootModel[int]):
    root: Annotated[int, Field(ge=0)]


class BarKind(str, Enum):
    """
    What a bar stands for.
    """

    attempt = 'attempt'
    """
    An attempt of the task's agent, from its start to the end of its judgement.
    """
    tests = 'tests'
    """
    Its tests.
    """
    eval = 'eval'
    """
    Its evaluator.
    """
    merge = 'merge'
    """
    From the task being done to its branch merged (or the merge conflicting).
    """
    wait = 'wait'
    """
    Waiting for a person to approve or reject it.
    """


class Checkpoint(RootModel[int]):
    root: Annotated[int, Field(ge=0)]


class Budget(BaseModel):
    """
    What bounds an unlimited retry strategy.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    max_attempts: Annotated[int | None, Field(ge=0)]
    """
    Total attempts of the task, first one included.
    """
    max_elapsed_ms: Annotated[int | None, Field(ge=0)]
    """
    Milliseconds from the task's first start.
    """


class BudgetKind(str, Enum):
    """
    What a budget bounds.
    """

    cost_usd = 'cost-usd'
    """
    Dollars.
    """
    tokens = 'tokens'
    """
    Tokens.
    """


class CallEndAnswered(BaseModel):
    """
    The provider answered (its status says how).
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    end: Literal['answered']


class UpstreamFailed(BaseModel):
    """
    The provider could not be reached or stopped answering (the error says how); the
    command was told what happened, and runlog tried nothing more.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    end: Literal['upstream-failed']


class ClientGone(BaseModel):
    """
    The command hung up before the answer ended; the provider's call was cancelled.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    end: Literal['client-gone']


class OverBudget(BaseModel):
    """
    Refused by runlog before it reached the provider: a budget was spent.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    end: Literal['over-budget']
    spent: str
    """
    Whose budget, its limit and the spend, in words.
    """


class Refused(BaseModel):
    """
    Refused by runlog before it reached the provider: the request was not one it passes
    on (too large, not JSON, an unknown provider); the error says which.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    end: Literal['refused']


class Interrupted(BaseModel):
    """
    The runner stopped (a kill -9) while the call was in flight: recorded on resume.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    end: Literal['interrupted']


class Replayed(BaseModel):
    """
    A rerun answered it from the recording: the recorded run's call at `seq` asked the
    same, and its answer was given again. No provider was reached.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    end: Literal['replayed']
    seq: Annotated[int, Field(ge=0)]
    """
    The seq of the recorded call, in the run rerun.
    """


class Diverged(BaseModel):
    """
    A rerun with recorded answers refused it: it asked something the recording did not
    (the `call-diverged` event before it says how).
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    end: Literal['diverged']


class RateLimited(BaseModel):
    """
    Refused by runlog before it reached the provider: over a rate limit the workflow gives
    the provider; the command was told when to come back (429, `retry-after`).
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    end: Literal['rate-limited']
    limit: str
    """
    The limit, in words (`requests_per_minute = 30`).
    """
    retry_after_ms: Annotated[int, Field(ge=0)]
    """
    When the command was told to come back, in milliseconds.
    """


class Circuit(str, Enum):
    """
    Circuit breaker state of a stage.
    """

    closed = 'closed'
    """
    Attempts allowed.
    """
    open = 'open'
    """
    Too many failures in a row: no new attempts.
    """


class Rescue(BaseModel):
    """
    The task was sent back to its agent.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    consequence: Literal['rescue']
    n: Annotated[int, Field(ge=0)]
    """
    Rescue number.
    """


class Failed(BaseModel):
    """
    The task failed.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    consequence: Literal['failed']


class MergeConflicted(BaseModel):
    """
    The gate passed the work, and its merge into the integration branch then conflicted:
    it did not count as done.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    at_seq: Annotated[int, Field(ge=0)]
    """
    The seq of the conflict.
    """
    consequence: Literal['merge-conflicted']
    files: list[str]
    """
    The files in conflict.
    """
    rescue: Annotated[int | None, Field(ge=0)]
    """
    The rescue the task was sent back for; none: it waits for a person.
    """


class Held(BaseModel):
    """
    The gate's decision was held for a person's review, who has not decided yet.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    consequence: Literal['held']


class Reviewed(BaseModel):
    """
    A person decided a held verdict.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    approved: bool
    """
    Approved (done), else rejected.
    """
    at_seq: Annotated[int, Field(ge=0)]
    """
    The seq of the decision.
    """
    by: str
    """
    Who.
    """
    consequence: Literal['reviewed']
    reopen: bool
    """
    Rejected and reopened for another try.
    """


class CostBy(str, Enum):
    """
    What the rows of a cost report are.
    """

    task = 'task'
    """
    One row per task.
    """
    model = 'model'
    """
    One row per model (`unknown` when a report named none).
    """
    stage = 'stage'
    """
    One row per stage: agent, tests, evaluator, replanner.
    """
    attempt = 'attempt'
    """
    One row per task attempt (`TASK#N`).
    """
    call = 'call'
    """
    One row per model call (`TASK#N STAGE call K`): each call through the gateway, or,
    where a command reported its own usage, each report.
    """


class CostSource(str, Enum):
    """
    Where a recorded cost comes from.
    """

    reported = 'reported'
    """
    The report carried its cost (a reported cost wins over a price).
    """
    priced = 'priced'
    """
    runlog priced the tokens with the workflow's `[prices]` for the model.
    """
    unpriced = 'unpriced'
    """
    Neither: the cost is unknown (shown as unpriced, never as free).
    """


class Difference(BaseModel):
    """
    A paired difference with its seeded bootstrap interval.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    high: float
    """
    High end.
    """
    low: float
    """
    95% interval, low end.
    """
    mean: float
    """
    The mean difference.
    """
    pairs: Annotated[int, Field(ge=0)]
    """
    Tasks paired.
    """


class Digest(BaseModel):
    """
    What pins a run's history up to a seq.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    head_hash: str
    """
    The chain hash after that seq (hex).
    """
    head_seq: Annotated[int, Field(ge=0)]
    """
    The seq it pins.
    """
    run: str
    """
    The run.
    """


class DimensionDelta(BaseModel):
    """
    A dimension on both sides.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    delta: float | None
    """
    Right − left, when both exist.
    """
    left: float | None
    """
    Left value.
    """
    right: float | None
    """
    Right value.
    """


class Error(BaseModel):
    model_config = ConfigDict(
        populate_by_name=True,
    )
    error: str
    hint: str | None = None


class HistogramItem(RootModel[int]):
    root: Annotated[int, Field(ge=0)]


class RunInterrupted(BaseModel):
    """
    The run was stopped (Ctrl-C, crash detected on resume); running attempts were abandoned.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    reason: str
    """
    Why.
    """
    type: Literal['run-interrupted']


class RolledBack(BaseModel):
    """
    The state went back to what it was after `to_seq`. Nothing is deleted.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    by: str
    """
    Who asked.
    """
    reason: str
    """
    Why.
    """
    to_seq: Annotated[int, Field(ge=0)]
    """
    The seq whose state is restored.
    """
    type: Literal['rolled-back']


class RunResumed(BaseModel):
    """
    An interrupted run continues.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    reason: str
    """
    Why or by whom.
    """
    type: Literal['run-resumed']


class Attributed(BaseModel):
    """
    Who issued the command whose events follow in the same append, as the process that
    recorded it established: a token's name over TCP, the user of a Unix socket's peer, the
    OS user of a process writing the store. Those events' own `by` is what the caller claimed.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    principal: str
    """
    The authenticated name.
    """
    type: Literal['attributed']
    via: str
    """
    How it was established: `token`, `unix-socket` or `os-user`.
    """


class WorkspaceOpened(BaseModel):
    """
    The run works in a git repository: each task in a worktree on a branch of its own, merged
    into the run's integration branch when done. Recorded once the run starts (and when a
    fork is first driven, for its own branch).
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    base: str
    """
    The commit the run began from.
    """
    branch: str
    """
    The integration branch (`runlog/RUN`).
    """
    repo: str
    """
    The repository (its top directory, or a shared repository's path or URL).
    """
    type: Literal['workspace-opened']


class Model(RootModel[tuple[str, str]]):
    root: Annotated[tuple[str, str], Field(max_length=2, min_length=2)]


class ExperimentBudgetSet(BaseModel):
    """
    An experiment's budget was changed (`experiment resume --max-cost-usd`), in its register.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    max_cost_usd: float | None
    """
    The most its live calls may cost now, in USD.
    """
    type: Literal['experiment-budget-set']


class EventKindAlertSent(BaseModel):
    """
    An alert was sent to a receiver of the workflow's `[[alerts]]`: delivered, or given up
    after its tries (the run goes on either way).
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    attempts: Annotated[int, Field(ge=0)]
    """
    Tries made.
    """
    error: str | None
    """
    Why it was not delivered, when it was not (the last try's error); none once delivered.
    """
    on: AlertOn
    """
    What about.
    """
    seq: Annotated[int, Field(ge=0)]
    """
    The seq of the event that raised it (0 for a test).
    """
    status: Annotated[int | None, Field(ge=0, le=65535)]
    """
    The last answer's status, when there was one.
    """
    to: str
    """
    Where it went: the receiver's scheme and host (its path may be a secret, as Slack's is).
    """
    type: Literal['alert-sent']


class Executing(BaseModel):
    """
    A run this server now executes (a start, a rerun), or one it is stopping.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    executing: bool
    """
    True: the server executes it.
    """
    from_run: str | None = None
    """
    The run it reruns, for a rerun.
    """
    run: str
    """
    The run.
    """


class Forked(BaseModel):
    """
    A fork recorded: the new run, the run and seq it started from, and its head (`fork --json`,
    the API's answer to a fork).
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    at_seq: Annotated[int, Field(ge=0)]
    """
    The seq of the run it was forked from.
    """
    from_run: str
    """
    The run it was forked from.
    """
    run: str
    """
    The new run.
    """
    seq: Annotated[int, Field(ge=0)]
    """
    The new run's head.
    """


class Found(BaseModel):
    """
    The first damage in a run.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    kind: str
    """
    What kind of damage.
    """
    reason: str
    """
    What is wrong, in words.
    """
    seq: Annotated[int, Field(ge=0)]
    """
    Where.
    """


class Rescue1(BaseModel):
    model_config = ConfigDict(
        populate_by_name=True,
    )
    n: Annotated[int, Field(ge=0)]
    """
    1-based rescue number.
    """


class GateOutcome1(BaseModel):
    """
    Below the threshold: rescue number `n` with the same agent, worktree and the eval feedback.
    """

    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    rescue: Rescue1


class Interrupting(BaseModel):
    """
    A run this server is interrupting.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    interrupting: bool
    """
    True: its commands are being stopped.
    """
    run: str
    """
    The run.
    """


class Judged(BaseModel):
    """
    The changes an evaluator judged: the commit and its counts (`runlog show RUN TASK --diff
    --attempt N` prints the patch).
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    attempt: Annotated[int, Field(ge=0)]
    """
    The attempt whose changes they are.
    """
    commit: str
    """
    The commit.
    """
    deletions: Annotated[int, Field(ge=0)]
    """
    Lines removed.
    """
    files: list[str]
    """
    The files changed.
    """
    insertions: Annotated[int, Field(ge=0)]
    """
    Lines added.
    """


class Limits(BaseModel):
    """
    A budget's bounds; `None` is no bound.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    max_cost_usd: float | None
    """
    USD, reported or priced (unpriced usage cannot count).
    """
    max_tokens: Annotated[int | None, Field(ge=0)]
    """
    Input and output tokens.
    """


class Mapped(BaseModel):
    """
    One place of the recording mapped to the rerun's, and how often an answer named it.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    count: Annotated[int, Field(ge=0)]
    """
    How many times the answer named it.
    """
    now: str
    """
    As the rerun has it.
    """
    was: str
    """
    As the recording had it.
    """


class ModelApi(str, Enum):
    """
    The provider API a call spoke.
    """

    messages = 'messages'
    """
    Anthropic Messages (`POST /v1/messages`).
    """
    count_tokens = 'count-tokens'
    """
    Anthropic's token count (`POST /v1/messages/count_tokens`).
    """
    chat_completions = 'chat-completions'
    """
    OpenAI Chat Completions (`POST /v1/chat/completions`).
    """
    responses = 'responses'
    """
    OpenAI Responses (`POST /v1/responses`).
    """
    models = 'models'
    """
    The model list (`GET /v1/models`).
    """


class Outcome(BaseModel):
    """
    What one task did in one execution (the recording, or a rerun).
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    calls: Annotated[int, Field(ge=0)]
    """
    Calls its commands made.
    """
    cost_usd: float
    """
    What its calls cost, answered live or from the recording (as the recording priced them).
    """
    done: bool
    """
    It ended done.
    """
    judged: bool | None
    """
    Whether the gate passed its last score (none when it is not judged or was not).
    """
    recorded_calls: Annotated[int, Field(ge=0)]
    """
    Of those, answered from the recording.
    """
    saved_usd: float
    """
    The part of `cost_usd` answered from the recording, paid once in the recorded run.
    """
    score: float | None
    """
    Its last score.
    """
    tests: bool | None
    """
    Whether its last tests passed (none when it has none or they did not run).
    """
    tokens: Annotated[int, Field(ge=0)]
    """
    Tokens its calls used (recorded answers count the recording's).
    """
    wall_ms: Annotated[int, Field(ge=0)]
    """
    From its first attempt's start to its end, in milliseconds.
    """


class OutputBound(str, Enum):
    """
    Where a call's bound on its output comes from.
    """

    request = 'request'
    """
    The request's own (`max_tokens`, `max_completion_tokens`, `max_output_tokens`).
    """
    model = 'model'
    """
    The request had none: runlog gave it the model's `max_output_tokens` from `[prices]`.
    """
    workflow = 'workflow'
    """
    The request had none: runlog gave it the workflow's `max_output_tokens`.
    """


class OutsidePolicy(str, Enum):
    """
    What a write outside the worktree does to its attempt (`[settings] outside_writes`).
    """

    warn = 'warn'
    """
    Recorded and shown; the attempt goes on as it ended.
    """
    fail = 'fail'
    """
    Recorded, and the attempt fails naming the paths.
    """


class Text(BaseModel):
    """
    What a person, an agent or the model wrote.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    part: Literal['text']
    text: str
    """
    The text.
    """


class Reminder(BaseModel):
    """
    Text an agent adds to a turn for the model alone, wrapped in a tag of its own (Claude
    Code's `<system-reminder>` blocks, Codex's `<environment_context>`): shown folded.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    part: Literal['reminder']
    text: str
    """
    The text, tags and all.
    """


class ToolCall(BaseModel):
    """
    A tool the model called.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    arguments: str
    """
    Its arguments, JSON as text.
    """
    id: str | None
    """
    The call's id, which its result names.
    """
    name: str
    """
    The tool.
    """
    part: Literal['tool-call']


class ToolResult(BaseModel):
    """
    What a tool gave back.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    error: bool
    """
    Whether the tool said it failed.
    """
    id: str | None
    """
    The id of the call it answers.
    """
    part: Literal['tool-result']
    text: str
    """
    Its text.
    """


class Thinking(BaseModel):
    """
    The model's reasoning, where the answer shows it.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    part: Literal['thinking']
    text: str
    """
    What it shows of it.
    """


class Other(BaseModel):
    """
    Anything else (an image, a document), by its type.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    of: str
    """
    The block's type.
    """
    part: Literal['other']


class Checkout(BaseModel):
    """
    The repository's own checkout (the person's working tree).
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    place: Literal['checkout']


class Presence(str, Enum):
    """
    Which sides a task is on.
    """

    both = 'both'
    """
    Both.
    """
    left_only = 'left-only'
    """
    Only the left.
    """
    right_only = 'right-only'
    """
    Only the right.
    """


class Price(BaseModel):
    """
    A model's prices in USD per million tokens (`[prices."MODEL"]` in a workflow).
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    cache_read: float | None
    """
    Per million tokens read from a cache; the input price when not given.
    """
    cache_write: float | None
    """
    Per million tokens written to a cache; the input price when not given.
    """
    input: float
    """
    Per million input tokens not read from or written to a cache.
    """
    output: float
    """
    Per million output tokens.
    """


class Progress(BaseModel):
    """
    Reruns done of all.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    ended: Annotated[int, Field(ge=0)]
    """
    Ended.
    """
    live_usd: float
    """
    What the live calls cost, in USD.
    """
    saved_usd: float
    """
    What the calls answered from the recording had cost, in USD.
    """
    started: Annotated[int, Field(ge=0)]
    """
    Started and not ended.
    """
    total: Annotated[int, Field(ge=0)]
    """
    Reruns planned (of the suite runs still in the store).
    """


class Ready(BaseModel):
    """
    Every dependency is done.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    readiness: Literal['ready']


class ReadinessBudgetSpent(BaseModel):
    """
    Every dependency is done, but the budget that bounds it is spent: the engine fails it
    (`budget-spent`) instead of starting it, until the budget is raised.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    readiness: Literal['budget-spent']
    spent: str
    """
    Which budget, its limit and the spend, in words.
    """


class Recorder(BaseModel):
    """
    Who recorded a decision, as its `attributed` event says (any log's words, so a string).
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    name: str
    """
    The name: a token's, a user's, an agent's.
    """
    via: str
    """
    How the recording process knew them (`token`, `os-user`...).
    """


class Redaction(BaseModel):
    """
    How many of one secret were replaced.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    count: Annotated[int, Field(ge=0)]
    """
    How many times it was replaced.
    """
    name: str
    """
    The secret's name: an environment variable's, a `redact_file` entry's, or a key shape
    (`openai-key`, `anthropic-key`, `aws-access-key`, `github-token`, `private-key`).
    """


class RerunCalls(BaseModel):
    """
    A rerun's calls, beside a diff of it and the run it reruns.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    calls: Answered
    """
    How its calls were answered.
    """
    run: str
    """
    The rerun.
    """
    said: str
    """
    The same in words.
    """


class RetryLimit1(BaseModel):
    """
    At most this many retries after the first attempt.
    """

    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    max: Annotated[int, Field(ge=0)]


class RetryStrategy(BaseModel):
    """
    The supervisor's recovery strategy, per task (or per stage with `StrategySet`).
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    backoff: float
    """
    Each further retry waits this many times longer.
    """
    budget: Budget
    """
    Bounds for `Unlimited` (also applied to `Max` when set).
    """
    circuit_after: Annotated[int, Field(ge=0)]
    """
    Consecutive failures of a stage that open its circuit; 0 never opens it.
    """
    delay_ms: Annotated[int, Field(ge=0)]
    """
    Delay before the first retry.
    """
    limit: RetryLimit1 | Literal['unlimited']
    """
    How many retries.
    """
    timeout_ms: Annotated[int | None, Field(ge=0)]
    """
    Per-attempt timeout; the runner kills the attempt's process group when it passes.
    """


class ReviewMode(str, Enum):
    """
    Which verdicts a person reviews whatever the score.
    """

    none = 'none'
    """
    None (the gate decides alone), apart from the sampled share.
    """
    failing = 'failing'
    """
    Every verdict the gate would not pass (a rescue or a fail).
    """
    all = 'all'
    """
    Every verdict.
    """


class ReviewPolicy(BaseModel):
    """
    The run's review policy, recorded as it starts (`review-set`).
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    mode: ReviewMode
    """
    The verdicts always reviewed.
    """
    sample: float
    """
    The share of the other verdicts reviewed as well, in [0, 1], chosen by a hash of the
    run, the task and the attempt: the same verdicts whenever the run is replayed.
    """


class Paused(BaseModel):
    model_config = ConfigDict(
        populate_by_name=True,
    )
    reason: str
    """
    Why, and what would unblock it.
    """


class RunOutcome2(BaseModel):
    """
    The run stopped waiting for a person (a replan without a replan command, an eval error).
    """

    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    paused: Paused


TasksAdditionalProperty = TypeAliasType(
    "TasksAdditionalProperty", Annotated[int, Field(ge=0)]
)


class Settings(BaseModel):
    """
    Settings in force for a run. Recorded in `RunStarted`, so an audit reads the values that
    decided, not today's config.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    auto_rescue: bool
    """
    Below-threshold scores rescue the task (same agent, same worktree) instead of failing it.
    """
    eval_threshold: float
    """
    A score at or above this passes the eval gate.
    """
    history_warn_events: Annotated[int, Field(ge=0)]
    """
    Past this many events the run's history is reported as growing large.
    """
    jobs: Annotated[int, Field(ge=0)]
    """
    How many tasks may run at once.
    """
    max_depth: Annotated[int, Field(ge=0)]
    """
    Deepest allowed nesting of tasks under parents (a top-level task has depth 1).
    """
    max_eval_rescues: Annotated[int, Field(ge=0)]
    """
    Rescues allowed per task before a failing score fails it.
    """
    max_test_retries: Annotated[int, Field(ge=0)]
    """
    Test failures retried per task before it fails.
    """


class Share(BaseModel):
    """
    A share with its 95% interval.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    high: float
    """
    Its high end.
    """
    k: Annotated[int, Field(ge=0)]
    """
    Successes.
    """
    low: float
    """
    The interval's low end.
    """
    n: Annotated[int, Field(ge=0)]
    """
    Trials.
    """
    share: float
    """
    k / n (0 when n is 0).
    """


class Skipped(BaseModel):
    """
    A suite run a variant is not applied to.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    reason: str
    """
    Why, in words.
    """
    run: str
    """
    The run.
    """
    variant: str
    """
    The variant.
    """


class StackState(str, Enum):
    """
    What a stack entry records.
    """

    stage_completed = 'stage-completed'
    """
    The stage completed.
    """
    stage_failed = 'stage-failed'
    """
    The stage failed.
    """


class SuiteStatus(BaseModel):
    """
    A suite run in the report.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    gone: bool
    """
    The run was forgotten (or removed) since: its base figures are missing.
    """
    head_hash: str
    """
    Its chain hash then.
    """
    head_seq: Annotated[int, Field(ge=0)]
    """
    Its head when pinned.
    """
    run: str
    """
    The run.
    """
    tasks: list[str]
    """
    The tasks executed again (empty: all).
    """


class TaskClass(str, Enum):
    """
    The classification of a refactoring task, recorded as an event.
    """

    merge = 'merge'
    """
    Duplicate code to merge.
    """
    move = 'move'
    """
    Misplaced code to move.
    """
    refactor = 'refactor'
    """
    Inconsistent pattern to refactor.
    """
    integrate = 'integrate'
    """
    Conflicting implementations; keep the superior one.
    """
    implement = 'implement'
    """
    Missing method that follows an existing pattern.
    """
    new_code = 'new-code'
    """
    A genuinely new requirement: reported, not attempted (only after full analysis).
    """
    analyze_more = 'analyze-more'
    """
    Not understood yet: keep analysing.
    """


class Attempt(RootModel[int]):
    root: Annotated[int, Field(ge=0)]


class Rescue2(RootModel[int]):
    root: Annotated[int, Field(ge=0)]


class TestFailure(RootModel[int]):
    root: Annotated[int, Field(ge=0)]


class TaskSpec(BaseModel):
    """
    A task as planned. Immutable once recorded in `TaskAdded` or `PlanRevised`.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    after: list[str]
    """
    Tasks that must be done first.
    """
    checkpoints: list[str]
    """
    Checkpoints the agent must reach before the task may resolve (exhaustive analysis).
    """
    description: str
    """
    What to do; also searched for file paths and destructive verbs (re-evaluation after a destructive task).
    """
    destructive: bool | None
    """
    `Some(true)`/`Some(false)` says whether it is destructive; `None` guesses from the description.
    """
    eval: str | None
    """
    The evaluator command; when set, passing tests lead to pending-eval, not done.
    """
    files: list[str]
    """
    Files the task touches, beside those named in the description.
    """
    id: str
    """
    Stable id.
    """
    parent: str | None
    """
    The group this task belongs to; a task with children is a group whose status follows them.
    """
    requires_testing: bool
    """
    `false` skips testing even when a test command is set (planning and docs tasks).
    """
    retry: RetryStrategy
    """
    Retry strategy for stage failures (agent exited non-zero or timed out).
    """
    run: str | None
    """
    The agent command.
    """
    stage: str | None
    """
    Supervisor stage; defaults to the task id.
    """
    test: str | None
    """
    The test command; with `requires_testing`, submit leads to testing.
    """


class TaskStatus(str, Enum):
    """
    A task's status. `blocked` is not a status: it is derived readiness of an open task.
    """

    open = 'open'
    """
    Not started.
    """
    in_progress = 'in-progress'
    """
    An attempt is running or due (a retry or rescue).
    """
    testing = 'testing'
    """
    Submitted; tests running.
    """
    test_failed = 'test-failed'
    """
    Tests failed; a retry is due.
    """
    pending_eval = 'pending-eval'
    """
    Submitted (and tested); waiting for the eval gate.
    """
    done = 'done'
    """
    Done: dependents may start.
    """
    failed = 'failed'
    """
    Failed.
    """
    cancelled = 'cancelled'
    """
    Cancelled (superseded by a replan, or by hand).
    """


class Timestamp(RootModel[int]):
    root: Annotated[int, Field(ge=0)]
    """
    Milliseconds since the Unix epoch. Time only enters the core inside commands and events.
    """


class Tokens(BaseModel):
    """
    Token counts, normalised.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    cache_read: Annotated[int, Field(ge=0)]
    """
    Of the input, read from a cache.
    """
    cache_write: Annotated[int, Field(ge=0)]
    """
    Of the input, written to a cache.
    """
    input: Annotated[int, Field(ge=0)]
    """
    Input tokens, cached ones included.
    """
    output: Annotated[int, Field(ge=0)]
    """
    Output tokens, reasoning included.
    """
    reasoning: Annotated[int, Field(ge=0)]
    """
    Of the output, spent reasoning.
    """


class Tombstone(BaseModel):
    """
    One tombstone in the register.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    at_ms: Annotated[int, Field(ge=0)]
    """
    When (ms since the epoch).
    """
    by: str
    """
    Who forgot it.
    """
    head_hash: str
    """
    Its chain hash there (hex).
    """
    head_seq: Annotated[int, Field(ge=0)]
    """
    Its last seq.
    """
    outcome: str
    """
    How it stood.
    """
    reason: str
    """
    Why.
    """
    run: str
    """
    The run forgotten.
    """
    seq: Annotated[int, Field(ge=0)]
    """
    The tombstone's own seq in the register.
    """


class Totals(BaseModel):
    """
    What a variant's executions used.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    calls: Annotated[int, Field(ge=0)]
    """
    Calls in all.
    """
    cost_usd: float
    """
    USD in all, answered live or from the recording.
    """
    cost_usd_mean: float
    """
    Per execution.
    """
    live_usd: float
    """
    USD of calls that went live.
    """
    recorded_calls: Annotated[int, Field(ge=0)]
    """
    Of those, answered from the recording.
    """
    saved_usd: float
    """
    USD of calls answered from the recording (not paid again).
    """
    tokens: Annotated[int, Field(ge=0)]
    """
    Tokens in all.
    """
    tokens_mean: float
    """
    Per execution.
    """
    wall_ms: Annotated[int, Field(ge=0)]
    """
    Milliseconds in all (tasks' own time, summed).
    """
    wall_ms_mean: float
    """
    Per execution.
    """


class Turn(BaseModel):
    """
    One turn: who spoke (`system`, `user`, `assistant`, `tool`) and what they said.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    parts: list[
        Annotated[
            Text | Reminder | ToolCall | ToolResult | Thinking | Other,
            Field(discriminator='part'),
        ]
    ]
    """
    What was said, in order.
    """
    role: str
    """
    The role.
    """


class UsageStage(str, Enum):
    """
    Which of an attempt's commands used the tokens.
    """

    agent = 'agent'
    """
    The task's agent.
    """
    tests = 'tests'
    """
    The task's tests.
    """
    evaluator = 'evaluator'
    """
    The task's evaluator.
    """
    replanner = 'replanner'
    """
    The replan command, charged to the task whose completion asked for it.
    """


class Value(
    RootModel[Optional[Union[bool, int, float, str, list["Value"], dict[str, "Value"]]]]
):
    root: Optional[Union[bool, int, float, str, list["Value"], dict[str, "Value"]]]
    """
    A JSON-like value, encodable with bincode.
    """


class Variant(BaseModel):
    """
    A variant: an overlay on each recorded run's workflow.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    file: str
    """
    The file it was read from, as given.
    """
    models: list[Model]
    """
    Its model map: a call asking the first model is answered by the second.
    """
    name: str
    """
    Its name.
    """
    text: str
    """
    The file's text, kept whole: each rerun applies it to its run's tasks.
    """


class VariantInfo(BaseModel):
    """
    A variant in the report.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    file: str | None
    """
    Its file (none for `base`).
    """
    models: list[Model]
    """
    Its model map, asked → answering.
    """
    name: str
    """
    Its name.
    """


class VerdictRef(BaseModel):
    """
    A verdict named in a report.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    attempt: Annotated[int, Field(ge=0)]
    """
    The attempt judged.
    """
    decision: str
    """
    The gate's decision: `pass`, `rescue` or `fail`.
    """
    run: str
    """
    The run.
    """
    score: float
    """
    The score.
    """
    seq: Annotated[int, Field(ge=0)]
    """
    Seq of the score.
    """
    task: str
    """
    The task.
    """
    why: str
    """
    Why it is named.
    """


class VersionSeen(BaseModel):
    """
    One version of an evaluator, as it said it was.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    first: VerdictRef
    """
    Its first verdict: the version changed there.
    """
    first_week: str
    """
    Its first verdict's week.
    """
    mean: float
    """
    Mean score.
    """
    pass_rate: float
    """
    Share passed.
    """
    verdicts: Annotated[int, Field(ge=0)]
    """
    Verdicts.
    """
    version: str
    """
    The version (empty: it said none).
    """


class Week(BaseModel):
    """
    One ISO week of an evaluator's scores.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    mean: float
    """
    Mean score.
    """
    pass_rate: float
    """
    Share passed.
    """
    verdicts: Annotated[int, Field(ge=0)]
    """
    Verdicts.
    """
    versions: list[str]
    """
    The versions the evaluator said it was that week.
    """
    week: str
    """
    `YYYY-Www`.
    """


class WhatIf(BaseModel):
    """
    Another threshold, or a weighting of the dimensions, to decide the recorded scores again.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    threshold: float | None
    """
    The threshold (each verdict's own where none).
    """
    weights: dict[str, float]
    """
    Weights by dimension: the score is their weighted mean (a verdict's own score where it
    has none of them).
    """


class Added(BaseModel):
    """
    What a call added to its attempt's conversation. Agents send the whole conversation with
    every call: the turns an earlier call of the attempt had sent, or was answered with, are
    named by count, and only the rest are given.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    added: list[Turn]
    """
    Its request's turns after those, in order.
    """
    kept: Annotated[int, Field(ge=0)]
    """
    How many of its request's first turns an earlier call of the attempt had (its request,
    then its answer).
    """
    kept_from: Annotated[int | None, Field(ge=0)]
    """
    The seq of that call, when `kept` is not 0.
    """
    reply: list[Turn]
    """
    The model's answer, as the turns its agent sends back (one, or one per output item of
    OpenAI Responses); none when the answer was not one (an error, a refusal).
    """


class AnswerMapped(BaseModel):
    """
    A rerun's call answered from the recording with the recording's places given as the
    rerun's (the `answer-mapped` event's record, right before the call's own).
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    attempt: Annotated[int, Field(ge=0)]
    """
    The rerun's attempt.
    """
    mapped: list[Mapped]
    """
    What was mapped, and how often.
    """
    n: Annotated[int, Field(ge=0)]
    """
    The call's number among the command's calls, from 1.
    """
    recorded_seq: Annotated[int, Field(ge=0)]
    """
    The seq of the recorded call whose answer it was given, in the run rerun.
    """
    stage: UsageStage
    """
    Which command.
    """
    task: str
    """
    The task.
    """


class Bar(BaseModel):
    """
    Something that took time.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    attempt: Annotated[int, Field(ge=0)]
    """
    The attempt it belongs to (0 when none had started).
    """
    failed: str | None
    """
    Why it failed, when it did.
    """
    from_: Annotated[int, Field(alias='from', ge=0)]
    """
    When it began, ms since the epoch.
    """
    kind: BarKind
    """
    What.
    """
    open: bool
    """
    Still going at the last event.
    """
    seqs: tuple[Seq, Seq]
    """
    The seqs of the events it covers.
    """
    to: Annotated[int, Field(ge=0)]
    """
    When it ended (the last event so far, while `open`).
    """


class Body(BaseModel):
    """
    A body kept in the store's blob area: its hash and its size.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    blob: Annotated[str, Field(pattern='^[0-9a-f]{64}$')]
    """
    The blob's hash.
    """
    bytes: Annotated[int, Field(ge=0)]
    """
    Its size in bytes.
    """


class BudgetLeft(BaseModel):
    """
    A budget and what is left of it.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    held_tokens: Annotated[int | None, Field(ge=0)] = None
    """
    Tokens those calls hold at most.
    """
    held_usd: float | None = None
    """
    Dollars those calls hold at most (of the priced ones).
    """
    in_flight: Annotated[int | None, Field(ge=0)] = None
    """
    Calls in flight holding their worst case against it (`model-call-reserved` not yet
    settled by their `model-called`); left out of JSON, with what they hold, when none is.
    """
    limits: Limits
    """
    The bounds.
    """
    task: str | None
    """
    The task whose budget it is, or none for the run's.
    """
    tokens_left: Annotated[int | None, Field(ge=0)]
    """
    Tokens left (0 once spent), when bounded.
    """
    usd_left: float | None
    """
    Dollars left (0 once spent), when bounded.
    """


class BudgetStop(BaseModel):
    """
    A budget found spent, and whose.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    budget: str | None
    """
    The task whose own budget it is, or none for the run's.
    """
    kind: BudgetKind
    """
    Dollars or tokens.
    """
    limit: float
    """
    The limit in force.
    """
    spent: float
    """
    What was spent.
    """


class CallShown(BaseModel):
    """
    One call with its conversation in words.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    answered: str
    """
    What the model answered, in words.
    """
    api: ModelApi
    """
    The API it spoke.
    """
    asked: str
    """
    What was new in its request, in words.
    """
    assembled: Body | None
    """
    For a stream, the message its events put together.
    """
    attempt: Annotated[int, Field(ge=0)]
    """
    The attempt.
    """
    cost: CostSource
    """
    Where the cost comes from.
    """
    cost_usd: float | None
    """
    The cost in USD: the provider's, or priced with the run's prices, or unknown.
    """
    duration_ms: Annotated[int, Field(ge=0)]
    """
    Milliseconds from the request to the answer's last byte (or the end).
    """
    end: Annotated[
        CallEndAnswered
        | UpstreamFailed
        | ClientGone
        | OverBudget
        | Refused
        | Interrupted
        | Replayed
        | Diverged
        | RateLimited,
        Field(discriminator='end'),
    ]
    """
    How it ended.
    """
    error: str | None
    """
    What went wrong, when something did.
    """
    first_byte_ms: Annotated[int | None, Field(ge=0)]
    """
    Milliseconds from the request to the provider's first byte, when one came.
    """
    headline: str
    """
    Its provider, API, model, end, time, tokens and cost on one line.
    """
    mapped: list[Mapped]
    """
    In a rerun, the recorded run's places (worktrees, branches, store) its recorded answer
    was given as the rerun's, and how often; empty when none were.
    """
    model: str | None
    """
    The model: the one that answered, else the one asked for.
    """
    n: Annotated[int, Field(ge=0)]
    """
    Its number among that command's calls, from 1.
    """
    provider: str
    """
    The provider, as the workflow names it (`anthropic`, `openai`, or a `[providers]`
    table's name).
    """
    request: Body | None
    """
    The request as sent (secrets replaced).
    """
    response: Body | None
    """
    The answer as it came: for a stream, its events as they passed.
    """
    seq: Annotated[int, Field(ge=0)]
    """
    The seq of its `model-called` event.
    """
    stage: UsageStage
    """
    Which of the attempt's commands.
    """
    status: Annotated[int, Field(ge=0, le=65535)]
    """
    The HTTP status the command was given (0 when none was).
    """
    streamed: bool
    """
    Whether the answer was streamed (server-sent events).
    """
    task: str
    """
    The task whose command made it (for the replanner, the task whose completion asked
    for it).
    """
    tokens: Tokens
    """
    The usage the provider returned.
    """
    turns: Added | None = None
    """
    The conversation, when asked for.
    """


class Checked(BaseModel):
    """
    What verifying one run found (`verify --json`, the API's `GET /v1/runs/{run}/verify`).
    Fields in the alphabetical order `--json` has always printed them in.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    damage: Found | None
    """
    The first damage, if any.
    """
    forgotten: Tombstone | None = None
    """
    For a forgotten run: its tombstone (its events are gone; the tombstone is verified
    with the register of forgotten runs).
    """
    head_seq: Annotated[int | None, Field(ge=0)]
    """
    The run's head.
    """
    ok: bool
    """
    No damage.
    """
    run: str
    """
    The run.
    """
    verified: Annotated[int, Field(ge=0)]
    """
    Events verified (before the damage, if any).
    """


class Done(BaseModel):
    """
    The task was done; these dependents became ready at that seq.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    at_seq: Annotated[int, Field(ge=0)]
    """
    The seq of the decision.
    """
    consequence: Literal['done']
    merged_at: Annotated[int | None, Field(ge=0)] = None
    """
    In a git workspace: the seq of the merge into the integration branch, where the
    dependents in `ready` became ready.
    """
    ready: list[str]
    """
    Dependents that became ready.
    """


class CostRow(BaseModel):
    """
    One row: what one key spent.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    cost_usd: float
    """
    USD, reported or priced.
    """
    key: str
    """
    The task, model, stage or `TASK#ATTEMPT`.
    """
    tokens: Tokens
    """
    Tokens used.
    """
    unpriced: Annotated[int, Field(ge=0)]
    """
    Usage records whose cost is unknown (their tokens count, their dollars cannot).
    """


class Divergence(BaseModel):
    """
    A call of a rerun that did not ask what the recording asked (the `call-diverged` event's
    record): which call, which recorded call it was compared with, and how it differs.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    attempt: Annotated[int, Field(ge=0)]
    """
    The rerun's attempt.
    """
    live: bool
    """
    Whether the call went to the provider (`recorded-then-live`) or was refused.
    """
    n: Annotated[int, Field(ge=0)]
    """
    The call's number among the command's calls, from 1.
    """
    recorded_seq: Annotated[int | None, Field(ge=0)]
    """
    The seq of the recorded call it was compared with, in the run rerun (none when the
    recording has no call that far).
    """
    stage: UsageStage
    """
    Which command.
    """
    task: str
    """
    The task.
    """
    why: str
    """
    How it differs, in words.
    """


class Drift(BaseModel):
    """
    How an evaluator's scores moved over time and across its versions.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    versions: list[VersionSeen]
    """
    By version, in the order each first appeared.
    """
    weeks: list[Week]
    """
    By week, oldest first.
    """


class RunStarted(BaseModel):
    """
    The run began with this workflow and these settings.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    run: str
    """
    The run's id.
    """
    settings: Settings
    """
    Settings in force.
    """
    type: Literal['run-started']
    workflow: str
    """
    Workflow name (or path).
    """
    workflow_hash: Annotated[str, Field(pattern='^[0-9a-f]{64}$')]
    """
    blake3 of the workflow file, to tell if a resume reads the same file.
    """


class EventKindForked(BaseModel):
    """
    This run is a fork: its state starts as `from_run`'s state after `at_seq`.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    at_seq: Annotated[int, Field(ge=0)]
    """
    The parent's seq the fork starts from.
    """
    from_hash: Annotated[str, Field(pattern='^[0-9a-f]{64}$')]
    """
    The parent's chain hash at that seq, so the lineage can be verified.
    """
    from_run: str
    """
    The parent run.
    """
    run: str
    """
    This (new) run.
    """
    type: Literal['forked']


class TaskAdded(BaseModel):
    """
    A task joined the plan.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    spec: TaskSpec
    """
    The task (boxed to keep every event small; encoded exactly like the spec itself).
    """
    type: Literal['task-added']


class ReplanRequested(BaseModel):
    """
    A destructive task touched files that pending tasks need: dispatch pauses (re-evaluation after a destructive task).
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    affected: list[str]
    """
    Pending tasks that touch them.
    """
    after_task: str
    """
    The task whose completion triggered it.
    """
    reason: str
    """
    Why, in words.
    """
    touched_files: list[str]
    """
    Files both the finished task and a pending task touch.
    """
    type: Literal['replan-requested']


class TaskStarted(BaseModel):
    """
    An attempt of a task began.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    agent: str
    """
    The agent identity (kept across rescues).
    """
    attempt: Annotated[int, Field(ge=0)]
    """
    1-based attempt number over the task's life.
    """
    task: str
    """
    The task.
    """
    type: Literal['task-started']
    worktree: str
    """
    The worktree (kept across rescues).
    """


class TaskSubmitted(BaseModel):
    """
    The agent said it is done (exit 0); testing or the eval gate decide the rest.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    summary: str
    """
    What the agent said it did.
    """
    task: str
    """
    The task.
    """
    type: Literal['task-submitted']


class TestsStarted(BaseModel):
    """
    The task's tests began.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    attempt: Annotated[int, Field(ge=0)]
    """
    Attempt under test.
    """
    task: str
    """
    The task.
    """
    type: Literal['tests-started']


class TestsPassed(BaseModel):
    """
    The tests passed.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    attempt: Annotated[int, Field(ge=0)]
    """
    Attempt under test.
    """
    task: str
    """
    The task.
    """
    type: Literal['tests-passed']


class TestsFailed(BaseModel):
    """
    The tests failed; the details are the next attempt's feedback.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    attempt: Annotated[int, Field(ge=0)]
    """
    Attempt under test.
    """
    details: str
    """
    Failure output.
    """
    task: str
    """
    The task.
    """
    type: Literal['tests-failed']


class EvalScored(BaseModel):
    """
    An evaluator scored the task.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    dimensions: dict[str, float]
    """
    Per-dimension scores in [0, 1].
    """
    evaluator: str
    """
    Which evaluator.
    """
    notes: str
    """
    The evaluator's notes (feedback for a rescue).
    """
    score: float
    """
    Overall score in [0, 1].
    """
    task: str
    """
    The task.
    """
    type: Literal['eval-scored']


class GateDecided(BaseModel):
    """
    The eval gate decided, with the threshold in force recorded for the audit.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    outcome: Literal['pass'] | GateOutcome1 | Literal['fail']
    """
    The decision.
    """
    score: float
    """
    The score decided on.
    """
    task: str
    """
    The task.
    """
    threshold: float
    """
    The threshold in force.
    """
    type: Literal['gate-decided']


class TaskApproved(BaseModel):
    """
    A person approved the task, bypassing the gate.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    by: str
    """
    Who.
    """
    task: str
    """
    The task.
    """
    type: Literal['task-approved']


class TaskRejected(BaseModel):
    """
    A person rejected the task.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    by: str
    """
    Who.
    """
    reason: str
    """
    Why.
    """
    reopen: bool
    """
    Back to open for another try instead of failed.
    """
    task: str
    """
    The task.
    """
    type: Literal['task-rejected']


class TaskFailed(BaseModel):
    """
    The task failed.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    reason: str
    """
    Why.
    """
    task: str
    """
    The task.
    """
    type: Literal['task-failed']


class TaskCancelled(BaseModel):
    """
    The task was cancelled (superseded by a replan, or by hand).
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    reason: str
    """
    Why.
    """
    task: str
    """
    The task.
    """
    type: Literal['task-cancelled']


class TaskReopened(BaseModel):
    """
    A failed task was put back to open (triage).
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    by: str
    """
    Who.
    """
    task: str
    """
    The task.
    """
    type: Literal['task-reopened']


class CheckpointReached(BaseModel):
    """
    The agent reached a named checkpoint.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    name: str
    """
    The checkpoint.
    """
    task: str
    """
    The task.
    """
    type: Literal['checkpoint-reached']


class TaskClassified(BaseModel):
    """
    The agent classified the task (a refactoring's verdict).
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    class_: Annotated[TaskClass, Field(alias='class')]
    """
    The class.
    """
    task: str
    """
    The task.
    """
    type: Literal['task-classified']


class MessagePosted(BaseModel):
    """
    A message about the run or a task.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    from_: Annotated[str, Field(alias='from')]
    """
    Who wrote it.
    """
    task: str | None
    """
    The task it concerns, if any.
    """
    text: str
    """
    The text.
    """
    type: Literal['message-posted']


class StageStarted(BaseModel):
    """
    A supervised stage attempt began.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    attempt: Annotated[int, Field(ge=0)]
    """
    Attempt number.
    """
    stage: str
    """
    The stage.
    """
    task: str
    """
    The task running in it.
    """
    type: Literal['stage-started']


class StageCompleted(BaseModel):
    """
    A stage attempt succeeded; its result goes on the supervisor stack.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    duration_ms: Annotated[int, Field(ge=0)]
    """
    How long the attempt took.
    """
    result: Value
    """
    The stage's result.
    """
    retry_count: Annotated[int, Field(ge=0)]
    """
    Retries it took.
    """
    stage: str
    """
    The stage.
    """
    task: str
    """
    The task.
    """
    type: Literal['stage-completed']


class StageFailed(BaseModel):
    """
    A stage attempt failed; the error goes on the supervisor stack.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    duration_ms: Annotated[int, Field(ge=0)]
    """
    How long the attempt took.
    """
    error: str
    """
    Error message.
    """
    error_type: str
    """
    Error class (exit-code, timeout, spawn, checkpoints...).
    """
    retry_count: Annotated[int, Field(ge=0)]
    """
    Retries so far, this failure included.
    """
    stage: str
    """
    The stage.
    """
    task: str
    """
    The task.
    """
    type: Literal['stage-failed']


class RetryScheduled(BaseModel):
    """
    Another attempt is due after `delay_ms`.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    attempt: Annotated[int, Field(ge=0)]
    """
    The attempt that will run.
    """
    delay_ms: Annotated[int, Field(ge=0)]
    """
    Backoff delay.
    """
    stage: str
    """
    The stage.
    """
    task: str
    """
    The task.
    """
    type: Literal['retry-scheduled']


class CircuitOpened(BaseModel):
    """
    The stage failed too often in a row; its tasks are not started until it closes.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    failures: Annotated[int, Field(ge=0)]
    """
    Consecutive failures seen.
    """
    stage: str
    """
    The stage.
    """
    type: Literal['circuit-opened']


class CircuitClosed(BaseModel):
    """
    The stage's circuit closed again.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    stage: str
    """
    The stage.
    """
    type: Literal['circuit-closed']


class StrategySet(BaseModel):
    """
    The stage's retry strategy changed (the supervisor's `set_recovery_strategy`).
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    stage: str
    """
    The stage.
    """
    strategy: RetryStrategy
    """
    The new strategy.
    """
    type: Literal['strategy-set']


class PendingValidation(BaseModel):
    """
    Legacy: written by versions before the eval gate. Upcast on read into the gate:
    the task waits in pending-eval, unless it is already done.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    task: str
    """
    The task.
    """
    type: Literal['pending-validation']


class EvalErrored(BaseModel):
    """
    The evaluator could not score (no JSON, score out of range...). The task stays in
    pending-eval for a person to approve, reject, or run the evaluator again.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    error: str
    """
    What was wrong.
    """
    evaluator: str
    """
    Which evaluator.
    """
    task: str
    """
    The task.
    """
    type: Literal['eval-errored']


class ReplanLoopDetected(BaseModel):
    """
    A revised plan equals an earlier one: a regeneration loop, reported instead of retried.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    plan_hash: Annotated[str, Field(pattern='^[0-9a-f]{64}$')]
    """
    Hash shared by the two plans.
    """
    reason: str
    """
    The reason the replanner gave this time.
    """
    same_as_revision: Annotated[int, Field(ge=0)]
    """
    1-based number of the earlier revision with that hash.
    """
    type: Literal['replan-loop-detected']


class OutputRecorded(BaseModel):
    """
    Output of an agent, test or evaluator: kept inline when small, in the blob area (by
    blake3 hash) when large, with the start of it inline.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    attempt: Annotated[int, Field(ge=0)]
    """
    The attempt.
    """
    blob: Annotated[str, StringConstraints(pattern=r'^[0-9a-f]{64}$')] | None
    """
    The blob holding all of it, when it is large.
    """
    bytes: Annotated[int, Field(ge=0)]
    """
    Its full size.
    """
    stream: str
    """
    `agent`, `test` or `eval`, then `.stdout` or `.stderr`.
    """
    task: str
    """
    The task.
    """
    text: str
    """
    The text, or its beginning when it is in the blob area.
    """
    type: Literal['output-recorded']


class TestsDiscovered(BaseModel):
    """
    A task that requires testing and named no test command got one by a convention (seed
    004's test discovery), before the run started.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    convention: str
    """
    Which convention: `test_file`, `pytest tests/test_{id}.py`, `make test-{id}`,
    `{id}_test.py` or `test_{id}.py`.
    """
    task: str
    """
    The task.
    """
    test: str
    """
    The test command it gave the task.
    """
    type: Literal['tests-discovered']


class SubProjectDeclared(BaseModel):
    """
    A task runs another workflow as a child run of its own (a sub-project),
    declared before the run's first attempt.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    task: str
    """
    The task.
    """
    type: Literal['sub-project-declared']
    workflow: str
    """
    The child workflow file, as the parent's workflow names it.
    """


class ChildRunStarted(BaseModel):
    """
    A sub-project task's child run started (or was taken on again): the parent's side of
    the link.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    child_run: str
    """
    The child run.
    """
    task: str
    """
    The task.
    """
    type: Literal['child-run-started']


class ParentLinked(BaseModel):
    """
    This run is a sub-project of a task of another run: the child's side of the link.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    parent_run: str
    """
    The parent run.
    """
    task: str
    """
    The parent's task this run is the work of.
    """
    type: Literal['parent-linked']


class ChildRunEnded(BaseModel):
    """
    A sub-project task's child run finished. Succeeded: the task is submitted next. Not: the
    task stays in progress, waiting, with the child's failures named, until the parent is
    resumed.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    child_run: str
    """
    The child run.
    """
    failures: str
    """
    What failed or is blocked in the child (empty when it succeeded).
    """
    succeeded: bool
    """
    Whether every task of the child is done.
    """
    task: str
    """
    The task.
    """
    type: Literal['child-run-ended']


class WorkerClaimed(BaseModel):
    """
    A worker of the shared store took a task on: recorded with the attempt's start (or, for
    a task whose worker was lost, before its tests or eval go on elsewhere). Exactly one per
    start, decided by the log's expected-seq check.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    attempt: Annotated[int, Field(ge=0)]
    """
    The attempt.
    """
    fresh_worktree: bool
    """
    The worker has no worktree of the task's (its previous worker is gone): it starts in
    a fresh one, with the recorded feedback.
    """
    previous: str | None
    """
    The task's worker before, when another.
    """
    task: str
    """
    The task.
    """
    type: Literal['worker-claimed']
    worker: str
    """
    The worker.
    """


class AttemptAbandoned(BaseModel):
    """
    A worker's lease expired while it held a task: its attempt is abandoned and the task is
    taken on elsewhere. Recorded only once the worker can no longer record anything.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    attempt: Annotated[int, Field(ge=0)]
    """
    The attempt.
    """
    reason: str
    """
    Why, in words.
    """
    task: str
    """
    The task.
    """
    type: Literal['attempt-abandoned']
    worker: str
    """
    The worker that was lost.
    """


class ChangesRecorded(BaseModel):
    """
    What one attempt changed, committed in the task's branch (failed attempts too).
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    attempt: Annotated[int, Field(ge=0)]
    """
    The attempt.
    """
    blob: Annotated[str, StringConstraints(pattern=r'^[0-9a-f]{64}$')] | None
    """
    The whole patch in the blob area, when larger than the event holds.
    """
    commit: str
    """
    The commit runlog made (the parent itself when the attempt changed nothing).
    """
    deletions: Annotated[int, Field(ge=0)]
    """
    Lines removed.
    """
    files: list[str]
    """
    The files changed.
    """
    insertions: Annotated[int, Field(ge=0)]
    """
    Lines added.
    """
    parent: str
    """
    The commit it was made on.
    """
    patch: str
    """
    The patch: whole when small, else its beginning.
    """
    patch_bytes: Annotated[int, Field(ge=0)]
    """
    The patch's size.
    """
    task: str
    """
    The task.
    """
    type: Literal['changes-recorded']


class TaskMerged(BaseModel):
    """
    A done task's branch merged into the integration branch.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    commit: str
    """
    The merge commit, the integration branch's tip after it.
    """
    task: str
    """
    The task.
    """
    type: Literal['task-merged']


class EventKindMergeConflicted(BaseModel):
    """
    Merging a done task's branch into the integration branch conflicted: the task is done no
    more. With a rescue left, a rescue resolves it in the task's worktree; without, it waits
    for a person (resolve in the worktree, then approve).
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    files: list[str]
    """
    The files in conflict.
    """
    rescue: Annotated[int | None, Field(ge=0)]
    """
    The rescue it goes to (its number), or none: it waits for a person.
    """
    task: str
    """
    The task.
    """
    type: Literal['merge-conflicted']


class PricesSet(BaseModel):
    """
    The prices runlog prices usage with (the workflow's `[prices]`), in USD per million
    tokens by model. Recorded when the run starts.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    prices: dict[str, Price]
    """
    By model.
    """
    type: Literal['prices-set']


class BudgetSet(BaseModel):
    """
    A budget was set or changed: the run's (no task) or a task's. The limits are the whole
    budget after the change.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    by: str
    """
    Who set it (`workflow` when the workflow did).
    """
    limits: Limits
    """
    The budget now.
    """
    task: str | None
    """
    The task, or none for the run.
    """
    type: Literal['budget-set']


class BudgetSpent(BaseModel):
    """
    A task would have started another attempt (a first one, a retry, a rescue) with its
    budget spent: it fails (`task-failed` follows) until the budget is raised.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    budget: str | None
    """
    Whose budget: the task's own, or none for the run's.
    """
    kind: BudgetKind
    """
    Dollars or tokens.
    """
    limit: float
    """
    The limit in force.
    """
    spent: float
    """
    What was spent.
    """
    task: str
    """
    The task.
    """
    type: Literal['budget-spent']


class SecretsRedacted(BaseModel):
    """
    Secrets were replaced with `[redacted:NAME]` in what the events after it record (a
    command's output, result, feedback, a message): by name and how many, never the value.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    redactions: list[Redaction]
    """
    What was replaced, by name.
    """
    task: str | None
    """
    The task whose record they were in, if any.
    """
    type: Literal['secrets-redacted']


class RunForgotten(BaseModel):
    """
    A run was forgotten: its records, outputs, snapshots and files removed from the store
    for good. Recorded in the store's register of forgotten runs ([`FORGOTTEN_RUNS`]),
    chained like any record, so what the run was stays provable: an export kept of it checks
    against this head. (Boxed: the tombstone is rare and large, every other event small.)
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    genesis: Annotated[str, Field(pattern='^[0-9a-f]{64}$')]
    """
    Its chain's first hash (from its id).
    """
    head_hash: Annotated[str, Field(pattern='^[0-9a-f]{64}$')]
    """
    Its chain hash at that seq: with `head_seq`, its digest.
    """
    head_seq: Annotated[int, Field(ge=0)]
    """
    Its last seq.
    """
    outcome: str
    """
    How it stood: `succeeded`, `failed`, `interrupted`...
    """
    principal: str
    """
    Who forgot it (the authenticated name).
    """
    reason: str
    """
    Why, as given (`--reason`, or the retention that applied).
    """
    run: str
    """
    The run.
    """
    via: str
    """
    How that was established: `token`, `unix-socket` or `os-user`.
    """
    type: Literal['run-forgotten']


class ModelCalled(BaseModel):
    """
    A call one of a task's commands made to a model, as the gateway saw it pass: its
    usage (measured, not as the command printed it) is the attempt's, priced as usage is.
    (Boxed: a call holds more than most events.)
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    api: ModelApi
    """
    The API it spoke.
    """
    assembled: Body | None
    """
    For a stream, the message its events put together.
    """
    attempt: Annotated[int, Field(ge=0)]
    """
    The attempt.
    """
    cost: CostSource
    """
    Where the cost comes from.
    """
    cost_usd: float | None
    """
    The cost in USD: the provider's, or priced with the run's prices, or unknown.
    """
    duration_ms: Annotated[int, Field(ge=0)]
    """
    Milliseconds from the request to the answer's last byte (or the end).
    """
    end: Annotated[
        CallEndAnswered
        | UpstreamFailed
        | ClientGone
        | OverBudget
        | Refused
        | Interrupted
        | Replayed
        | Diverged
        | RateLimited,
        Field(discriminator='end'),
    ]
    """
    How it ended.
    """
    error: str | None
    """
    What went wrong, when something did.
    """
    first_byte_ms: Annotated[int | None, Field(ge=0)]
    """
    Milliseconds from the request to the provider's first byte, when one came.
    """
    model: str | None
    """
    The model: the one that answered, else the one asked for.
    """
    n: Annotated[int, Field(ge=0)]
    """
    Its number among that command's calls, from 1.
    """
    provider: str
    """
    The provider, as the workflow names it (`anthropic`, `openai`, or a `[providers]`
    table's name).
    """
    request: Body | None
    """
    The request as sent (secrets replaced).
    """
    response: Body | None
    """
    The answer as it came: for a stream, its events as they passed.
    """
    stage: UsageStage
    """
    Which of the attempt's commands.
    """
    status: Annotated[int, Field(ge=0, le=65535)]
    """
    The HTTP status the command was given (0 when none was).
    """
    streamed: bool
    """
    Whether the answer was streamed (server-sent events).
    """
    task: str
    """
    The task whose command made it (for the replanner, the task whose completion asked
    for it).
    """
    tokens: Tokens
    """
    The usage the provider returned.
    """
    type: Literal['model-called']


class CallDiverged(BaseModel):
    """
    A call of a rerun asked something the recording did not: recorded before the call.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    attempt: Annotated[int, Field(ge=0)]
    """
    The rerun's attempt.
    """
    live: bool
    """
    Whether the call went to the provider (`recorded-then-live`) or was refused.
    """
    n: Annotated[int, Field(ge=0)]
    """
    The call's number among the command's calls, from 1.
    """
    recorded_seq: Annotated[int | None, Field(ge=0)]
    """
    The seq of the recorded call it was compared with, in the run rerun (none when the
    recording has no call that far).
    """
    stage: UsageStage
    """
    Which command.
    """
    task: str
    """
    The task.
    """
    why: str
    """
    How it differs, in words.
    """
    type: Literal['call-diverged']


class ReviewSet(BaseModel):
    """
    The verdicts a person reviews before the gate's decision on them takes effect (the
    workflow's `review`, `review_sample`). Recorded as the run starts, when any are.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    policy: ReviewPolicy
    """
    The policy.
    """
    type: Literal['review-set']


class ReviewHeld(BaseModel):
    """
    The gate's decision on a score, held for a person: the task waits in pending-eval
    until a person approves or rejects it (the decision is a label the evaluator is
    measured against).
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    outcome: Literal['pass'] | GateOutcome1 | Literal['fail']
    """
    What the gate decided.
    """
    score: float
    """
    The score.
    """
    task: str
    """
    The task.
    """
    threshold: float
    """
    The threshold in force.
    """
    type: Literal['review-held']


class EvaluatorNamed(BaseModel):
    """
    Who the evaluator said it was beside its score (`"model"`, `"version"`): recorded
    right before the score, so that an evaluator's versions can be told apart.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    model: str
    """
    The model it asked, or empty.
    """
    task: str
    """
    The task.
    """
    type: Literal['evaluator-named']
    version: str
    """
    Its own version (a prompt's, a rubric's), or empty.
    """


class EventKindAnswerMapped(BaseModel):
    """
    A rerun's call was answered from the recording with the recorded run's places (its
    worktrees, branches, store) given as the rerun's; recorded right before the call.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    attempt: Annotated[int, Field(ge=0)]
    """
    The rerun's attempt.
    """
    mapped: list[Mapped]
    """
    What was mapped, and how often.
    """
    n: Annotated[int, Field(ge=0)]
    """
    The call's number among the command's calls, from 1.
    """
    recorded_seq: Annotated[int, Field(ge=0)]
    """
    The seq of the recorded call whose answer it was given, in the run rerun.
    """
    stage: UsageStage
    """
    Which command.
    """
    task: str
    """
    The task.
    """
    type: Literal['answer-mapped']


class EventKindExperimentRerun(BaseModel):
    """
    A rerun of an experiment was started: in the register, and in the rerun itself (third,
    after its `rerun-started`) as its lineage.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    experiment: str
    """
    The experiment.
    """
    models: list[Model]
    """
    The model map its gateway applies.
    """
    repeat: Annotated[int, Field(ge=0)]
    """
    Which repeat, from 1.
    """
    rerun: str
    """
    The rerun.
    """
    run: str
    """
    The suite run executed again.
    """
    variant: str
    """
    The variant.
    """
    type: Literal['experiment-rerun']


class ModelCallReserved(BaseModel):
    """
    A model call's worst case was reserved against its task's and the run's budgets before
    it left; its `model-called` settles it to what the provider counted.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    api: ModelApi
    """
    The API it speaks.
    """
    attempt: Annotated[int, Field(ge=0)]
    """
    Its attempt.
    """
    bound: OutputBound
    """
    Where the output bound comes from.
    """
    cost_usd: float | None
    """
    The worst case in USD at the run's price for the model; none when the model has no
    price (then only a token budget holds it, as only tokens of its usage can count).
    """
    input_tokens: Annotated[int, Field(ge=0)]
    """
    Input tokens at most: the request's size in bytes (a token is at least a byte) and
    what the provider adds.
    """
    model: str | None
    """
    The model asked.
    """
    n: Annotated[int, Field(ge=0)]
    """
    The call's number among the command's calls (its `model-called` has the same).
    """
    output_tokens: Annotated[int, Field(ge=0)]
    """
    Output tokens at most.
    """
    provider: str
    """
    The provider it goes to.
    """
    stage: UsageStage
    """
    Which of the attempt's commands.
    """
    task: str
    """
    The task whose command makes the call.
    """
    type: Literal['model-call-reserved']


class CommandKeyed(BaseModel):
    """
    The `events` events just before this one record the command its sender gave this
    idempotency key; the same command sent again with the key is answered with them, not
    recorded twice, and another command with it is refused.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    command: Annotated[str, Field(pattern='^[0-9a-f]{64}$')]
    """
    blake3 of the command as decided (its JSON), to tell the same command from another.
    """
    events: Annotated[int, Field(ge=0)]
    """
    How many events before this one the command recorded.
    """
    key: str
    """
    The sender's key.
    """
    type: Literal['command-keyed']


class Execution(BaseModel):
    """
    One execution in a cell.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    outcome: Outcome | None
    """
    What it did, once ended.
    """
    rerun: str | None
    """
    The rerun, or none for the recording.
    """


class ExperimentRerun(BaseModel):
    """
    One rerun of an experiment (the `experiment-rerun` event's record): in the register when it
    is started, and in the rerun itself, third, as its lineage.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    experiment: str
    """
    The experiment.
    """
    models: list[Model]
    """
    The model map its gateway applies.
    """
    repeat: Annotated[int, Field(ge=0)]
    """
    Which repeat, from 1.
    """
    rerun: str
    """
    The rerun.
    """
    run: str
    """
    The suite run executed again.
    """
    variant: str
    """
    The variant.
    """


class ExperimentRow(BaseModel):
    """
    One experiment in the list.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    defined_ms: Annotated[int, Field(ge=0)]
    """
    When it was defined.
    """
    name: str
    """
    Its name.
    """
    progress: Progress
    """
    How far it has gone.
    """
    runs: Annotated[int, Field(ge=0)]
    """
    Suite runs.
    """
    variants: list[str]
    """
    Its variants' names.
    """


class ExperimentStarted(BaseModel):
    """
    An experiment defined and under way (`POST /v1/experiments`).
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    executing: bool
    """
    Always true: the server executes it.
    """
    experiment: str
    """
    Its name: `GET /v1/experiments/NAME` follows it.
    """
    reruns: Annotated[int, Field(ge=0)]
    """
    The reruns planned.
    """
    skipped: list[Skipped]
    """
    Runs a variant was not applied to, with why.
    """


class Flip(BaseModel):
    """
    A decision another threshold or weighting would have changed.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    afterwards: str
    """
    What became of the work.
    """
    borne_out: bool | None
    """
    What happened afterwards (a person, or a contradiction) sides with the new decision:
    `true`; with the old one: `false`; nothing says: none.
    """
    now_passes: bool
    """
    It would pass now (it did not), or not (it did).
    """
    score: float
    """
    The score the what-if read.
    """
    verdict: VerdictRef
    """
    The verdict.
    """


class FlippedTask(BaseModel):
    """
    A task whose outcome flipped.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    rerun: str | None
    """
    The rerun that shows it (the first of the variant's).
    """
    run: str
    """
    The suite run.
    """
    task: str
    """
    The task.
    """


class Forgotten(BaseModel):
    """
    What a run's tombstone keeps.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    genesis: Annotated[str, Field(pattern='^[0-9a-f]{64}$')]
    """
    Its chain's first hash (from its id).
    """
    head_hash: Annotated[str, Field(pattern='^[0-9a-f]{64}$')]
    """
    Its chain hash at that seq: with `head_seq`, its digest.
    """
    head_seq: Annotated[int, Field(ge=0)]
    """
    Its last seq.
    """
    outcome: str
    """
    How it stood: `succeeded`, `failed`, `interrupted`...
    """
    principal: str
    """
    Who forgot it (the authenticated name).
    """
    reason: str
    """
    Why, as given (`--reason`, or the retention that applied).
    """
    run: str
    """
    The run.
    """
    via: str
    """
    How that was established: `token`, `unix-socket` or `os-user`.
    """


class ForkOrigin(BaseModel):
    """
    A fork's origin.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    at_seq: Annotated[int, Field(ge=0)]
    """
    Parent seq.
    """
    from_hash: Annotated[str, Field(pattern='^[0-9a-f]{64}$')]
    """
    Parent chain hash at that seq.
    """
    from_run: str
    """
    Parent run.
    """


class Link(BaseModel):
    """
    A task's edges of the task graph.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    after: list[str]
    """
    What it waits for, as its plan names it.
    """
    id: str
    """
    The task.
    """
    replaced_by: list[str]
    """
    The tasks that replaced it.
    """


class Mark(BaseModel):
    """
    Something that happened at a moment (a model call: over its duration, ending then).
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    at: Annotated[int, Field(ge=0)]
    """
    When it was recorded.
    """
    duration_ms: Annotated[int | None, Field(ge=0)]
    """
    How long it took, when it took time (a model call).
    """
    kind: str
    """
    The event's kind (`model-called`, `task-approved`, `rolled-back`...).
    """
    label: str
    """
    What it was, in a few words.
    """
    seq: Annotated[int, Field(ge=0)]
    """
    Its seq.
    """


class MergeConflict(BaseModel):
    """
    A task's merge that conflicted.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    files: list[str]
    """
    The files in conflict.
    """
    rescue: Annotated[int | None, Field(ge=0)]
    """
    The rescue that was to resolve it; none: a person.
    """
    seq: Annotated[int, Field(ge=0)]
    """
    The seq of the conflict.
    """
    task: str
    """
    The task.
    """


class ModelCall(BaseModel):
    """
    One model call (the `model-called` event's record).
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    api: ModelApi
    """
    The API it spoke.
    """
    assembled: Body | None
    """
    For a stream, the message its events put together.
    """
    attempt: Annotated[int, Field(ge=0)]
    """
    The attempt.
    """
    cost: CostSource
    """
    Where the cost comes from.
    """
    cost_usd: float | None
    """
    The cost in USD: the provider's, or priced with the run's prices, or unknown.
    """
    duration_ms: Annotated[int, Field(ge=0)]
    """
    Milliseconds from the request to the answer's last byte (or the end).
    """
    end: Annotated[
        CallEndAnswered
        | UpstreamFailed
        | ClientGone
        | OverBudget
        | Refused
        | Interrupted
        | Replayed
        | Diverged
        | RateLimited,
        Field(discriminator='end'),
    ]
    """
    How it ended.
    """
    error: str | None
    """
    What went wrong, when something did.
    """
    first_byte_ms: Annotated[int | None, Field(ge=0)]
    """
    Milliseconds from the request to the provider's first byte, when one came.
    """
    model: str | None
    """
    The model: the one that answered, else the one asked for.
    """
    n: Annotated[int, Field(ge=0)]
    """
    Its number among that command's calls, from 1.
    """
    provider: str
    """
    The provider, as the workflow names it (`anthropic`, `openai`, or a `[providers]`
    table's name).
    """
    request: Body | None
    """
    The request as sent (secrets replaced).
    """
    response: Body | None
    """
    The answer as it came: for a stream, its events as they passed.
    """
    stage: UsageStage
    """
    Which of the attempt's commands.
    """
    status: Annotated[int, Field(ge=0, le=65535)]
    """
    The HTTP status the command was given (0 when none was).
    """
    streamed: bool
    """
    Whether the answer was streamed (server-sent events).
    """
    task: str
    """
    The task whose command made it (for the replanner, the task whose completion asked
    for it).
    """
    tokens: Tokens
    """
    The usage the provider returned.
    """


class Approved(BaseModel):
    """
    Approved by hand.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    by: str
    """
    Who, as claimed.
    """
    claim_differs: bool | None = None
    """
    The claim names someone else than the principal.
    """
    kind: Literal['approved']
    principal: Recorder | None = None
    """
    Who, as the recording process established it (logs before it was recorded: none).
    """
    ready: list[str]
    """
    Dependents that became ready.
    """
    seq: Annotated[int, Field(ge=0)]
    """
    Seq.
    """
    task: str
    """
    Task.
    """


class Rejected(BaseModel):
    """
    Rejected by hand.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    by: str
    """
    Who, as claimed.
    """
    claim_differs: bool | None = None
    """
    The claim names someone else than the principal.
    """
    kind: Literal['rejected']
    principal: Recorder | None = None
    """
    Who, as the recording process established it (logs before it was recorded: none).
    """
    reason: str
    """
    Why.
    """
    reopen: bool
    """
    Reopened instead of failed.
    """
    seq: Annotated[int, Field(ge=0)]
    """
    Seq.
    """
    task: str
    """
    Task.
    """


class EvalError(BaseModel):
    """
    The evaluator could not score.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    error: str
    """
    What was wrong.
    """
    evaluator: str
    """
    Evaluator.
    """
    kind: Literal['eval-error']
    seq: Annotated[int, Field(ge=0)]
    """
    Seq.
    """
    task: str
    """
    Task.
    """


class OutOfGateSecretsRedacted(BaseModel):
    """
    Secrets replaced with `[redacted:NAME]` before a record was kept.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    kind: Literal['secrets-redacted']
    redactions: list[Redaction]
    """
    By name, how many.
    """
    seq: Annotated[int, Field(ge=0)]
    """
    Seq.
    """
    task: str | None
    """
    The task whose record held them, if any.
    """


class ParentLink(BaseModel):
    """
    The task of another run this run is the sub-project of.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    run: str
    """
    The parent run.
    """
    task: str
    """
    The parent's task.
    """


class OtherRun(BaseModel):
    """
    The worktrees directory of another run in the store, not being executed now.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    place: Literal['other-run']
    run: str
    """
    That run.
    """


class Rate(BaseModel):
    """
    How often what happened afterwards contradicted one kind of decision.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    contradicted: Annotated[int, Field(ge=0)]
    """
    Contradicted.
    """
    of: Annotated[int, Field(ge=0)]
    """
    Decisions of the kind.
    """
    rate: float | None
    """
    The share contradicted.
    """
    verdicts: list[VerdictRef]
    """
    The contradicted verdicts, with what contradicted each.
    """


class ReadinessWaiting(BaseModel):
    """
    Some dependencies are not done yet.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    on: list[str]
    """
    Those dependencies.
    """
    readiness: Literal['waiting']


class Blocked(BaseModel):
    """
    Some dependencies failed or were cancelled: it cannot start until they are reopened.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    by: list[str]
    """
    Those dependencies.
    """
    readiness: Literal['blocked']


class CircuitOpen(BaseModel):
    """
    Every dependency is done, but its stage's circuit is open: the engine starts nothing of
    that stage until the circuit is closed (`close-circuit`).
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    readiness: Literal['circuit-open']
    stage: str
    """
    The stage.
    """


class Replacement(BaseModel):
    """
    A new task standing in for a cancelled one; dependents of `old` wait on `new` instead.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    new: str
    """
    The task that replaces it.
    """
    old: str
    """
    The superseded task.
    """


class RerunTask(BaseModel):
    """
    A task the rerun runs again from where it stood at the rerun's point, though the run it
    was forked from went on past it.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    attempts_ahead: Annotated[int, Field(ge=0)]
    """
    How many attempts the rerun's numbering is ahead of the recording's: its next attempt
    is answered by the recorded attempt that many below it.
    """
    commit: str | None
    """
    The commit its code starts from (in a git workspace).
    """
    task: str
    """
    The task.
    """


class Reservation(BaseModel):
    """
    The worst case of one call, held while it is in flight (the `model-call-reserved` event).
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    api: ModelApi
    """
    The API it speaks.
    """
    attempt: Annotated[int, Field(ge=0)]
    """
    Its attempt.
    """
    bound: OutputBound
    """
    Where the output bound comes from.
    """
    cost_usd: float | None
    """
    The worst case in USD at the run's price for the model; none when the model has no
    price (then only a token budget holds it, as only tokens of its usage can count).
    """
    input_tokens: Annotated[int, Field(ge=0)]
    """
    Input tokens at most: the request's size in bytes (a token is at least a byte) and
    what the provider adds.
    """
    model: str | None
    """
    The model asked.
    """
    n: Annotated[int, Field(ge=0)]
    """
    The call's number among the command's calls (its `model-called` has the same).
    """
    output_tokens: Annotated[int, Field(ge=0)]
    """
    Output tokens at most.
    """
    provider: str
    """
    The provider it goes to.
    """
    stage: UsageStage
    """
    Which of the attempt's commands.
    """
    task: str
    """
    The task whose command makes the call.
    """


class Retest(BaseModel):
    """
    The same work judged more than once.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    flipped: Annotated[int, Field(ge=0)]
    """
    Works whose decision was not always the same.
    """
    flips: list[list[VerdictRef]]
    """
    Those works' verdicts.
    """
    judgements: Annotated[int, Field(ge=0)]
    """
    The verdicts on them.
    """
    max_spread: float
    """
    The largest spread.
    """
    mean_spread: float | None
    """
    The mean of each work's score spread (highest less lowest).
    """
    works: Annotated[int, Field(ge=0)]
    """
    Works judged more than once.
    """


class Failed1(BaseModel):
    model_config = ConfigDict(
        populate_by_name=True,
    )
    blocked: list[str]
    """
    Open tasks that can never become ready.
    """
    failed: list[str]
    """
    Tasks that failed.
    """


class RunOutcome1(BaseModel):
    """
    Some tasks failed or are blocked by failures.
    """

    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    failed: Failed1


class RunSummary(BaseModel):
    """
    Counts over a run's history plus its current standing.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    attempts: Annotated[int, Field(ge=0)]
    """
    Attempts started.
    """
    circuits_opened: Annotated[int, Field(ge=0)]
    """
    Circuits opened.
    """
    eval_errors: Annotated[int, Field(ge=0)]
    """
    Evaluator errors.
    """
    evals: Annotated[int, Field(ge=0)]
    """
    Evals scored.
    """
    events: Annotated[int, Field(ge=0)]
    """
    Events in the history.
    """
    fork: ForkOrigin | None
    """
    Fork origin.
    """
    interruptions: Annotated[int, Field(ge=0)]
    """
    Interruptions.
    """
    last_at: Timestamp | None
    """
    Time of the last event.
    """
    merge_conflicts: list[MergeConflict] | None = None
    """
    In a git workspace: each merge into the integration branch that conflicted, in order.
    """
    messages: Annotated[int, Field(ge=0)]
    """
    Messages.
    """
    outcome: Literal['succeeded'] | RunOutcome1 | RunOutcome2 | None
    """
    The outcome, once finished.
    """
    replan_loops: Annotated[int, Field(ge=0)]
    """
    Regeneration loops detected.
    """
    replans: Annotated[int, Field(ge=0)]
    """
    Plans revised.
    """
    replans_requested: Annotated[int, Field(ge=0)]
    """
    Replans requested.
    """
    rescues: Annotated[int, Field(ge=0)]
    """
    Eval rescues.
    """
    rollbacks: Annotated[int, Field(ge=0)]
    """
    Rollbacks.
    """
    run: str | None
    """
    Run id.
    """
    stage_failures: Annotated[int, Field(ge=0)]
    """
    Stage failures.
    """
    started_at: Timestamp | None
    """
    Time of the first event.
    """
    status: str
    """
    `not-started`, `running`, `interrupted` or `finished`.
    """
    tasks: dict[str, TasksAdditionalProperty]
    """
    Tasks by status name (current state).
    """
    test_failures: Annotated[int, Field(ge=0)]
    """
    Test failures that led to a retry or failure.
    """
    workflow: str | None
    """
    Workflow name.
    """


class Spend(BaseModel):
    """
    What a budget's scope has spent.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    cost_usd: float
    """
    USD, reported or priced.
    """
    tokens: Tokens
    """
    Tokens used.
    """
    unpriced: Annotated[int, Field(ge=0)]
    """
    Usage records whose cost is unknown (their tokens count, their dollars cannot).
    """


class StackEntry(BaseModel):
    """
    One entry of the stack.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    at: Annotated[int, Field(ge=0)]
    """
    When.
    """
    duration_ms: Annotated[int, Field(ge=0)]
    """
    Duration of the attempt.
    """
    error: tuple[str, str] | None
    """
    The error and its type (failed entries).
    """
    result: Value | None
    """
    The result (completed entries).
    """
    retry_count: Annotated[int, Field(ge=0)]
    """
    Retries so far.
    """
    seq: Annotated[int, Field(ge=0)]
    """
    Seq of the event that pushed it.
    """
    stage: str
    """
    The stage.
    """
    state: StackState
    """
    Completed or failed.
    """
    task: str
    """
    The task.
    """


class StackView(BaseModel):
    """
    The stack, newest first, and the latest result per stage.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    latest_results: dict[str, Value]
    """
    Each stage's latest result.
    """
    run: str
    """
    The run.
    """
    seq: Annotated[int, Field(ge=0)]
    """
    The seq it stands at.
    """
    stack: list[StackEntry]
    """
    Its entries, newest first.
    """


class StageDiff(BaseModel):
    """
    A stage whose latest result differs.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    left: Value | None
    """
    Left result.
    """
    right: Value | None
    """
    Right result.
    """
    stage: str
    """
    The stage.
    """


class StageHealthRow(BaseModel):
    """
    Health of one stage.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    circuit: Circuit
    """
    Circuit breaker.
    """
    completions: Annotated[int, Field(ge=0)]
    """
    Attempts completed.
    """
    consecutive_failures: Annotated[int, Field(ge=0)]
    """
    Failures since the last success.
    """
    executions: Annotated[int, Field(ge=0)]
    """
    Attempts started.
    """
    failures: Annotated[int, Field(ge=0)]
    """
    Attempts failed.
    """
    stage: str
    """
    The stage.
    """
    strategy_overridden: bool
    """
    Whether a strategy was set for the stage at run time.
    """
    total_duration_ms: Annotated[int, Field(ge=0)]
    """
    Total duration of finished attempts.
    """


class StagesView(BaseModel):
    """
    One row per stage that has run, at a seq.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    run: str
    """
    The run.
    """
    seq: Annotated[int, Field(ge=0)]
    """
    The seq the rows stand at.
    """
    stages: list[StageHealthRow]
    """
    The stages, by name.
    """


class SuiteRun(BaseModel):
    """
    A recorded run of the suite.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    head_hash: str
    """
    Its chain hash at that seq, hex.
    """
    head_seq: Annotated[int, Field(ge=0)]
    """
    Its head when the experiment was defined: what `base` is.
    """
    run: str
    """
    The run.
    """
    tasks: list[str]
    """
    The tasks executed again (empty: all of them).
    """


class TaskDiff(BaseModel):
    """
    How one task differs.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    attempts: tuple[Attempt, Attempt] | None
    """
    Attempts left → right, when they changed.
    """
    dimensions: dict[str, DimensionDelta]
    """
    Per-dimension score deltas (right − left; a side without it counts as absent).
    """
    presence: Presence
    """
    Present only on the right (added, e.g. by a replan), only on the left, or both.
    """
    replaced_by: list[str]
    """
    Tasks replacing it on the right that did not on the left.
    """
    rescues: tuple[Rescue2, Rescue2] | None
    """
    Rescues left → right, when they changed.
    """
    score: tuple[float | None, float | None] | None
    """
    Eval score left → right, when it changed.
    """
    status: tuple[TaskStatus | None, TaskStatus | None] | None
    """
    Status left → right, when it changed.
    """
    task: str
    """
    The task.
    """
    test_failures: tuple[TestFailure, TestFailure] | None
    """
    Test failures left → right, when they changed.
    """


class TimelineRow(BaseModel):
    """
    A task's row.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    bars: list[Bar]
    """
    Its bars, in the order they began.
    """
    marks: list[Mark]
    """
    Its marks, in seq order.
    """
    task: str
    """
    The task.
    """


class UsageRecord(BaseModel):
    """
    One usage record as the state keeps it (the `usage-recorded` event's fields).
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    attempt: Annotated[int, Field(ge=0)]
    """
    The attempt.
    """
    cost: CostSource
    """
    Where the cost comes from.
    """
    cost_usd: float | None
    """
    The cost, when known.
    """
    model: str | None
    """
    The model, when reported.
    """
    provider: str | None
    """
    The provider, when known.
    """
    reports: Annotated[int, Field(ge=0)]
    """
    How many reports were added up into it.
    """
    stage: UsageStage
    """
    Which command.
    """
    task: str
    """
    The task.
    """
    tokens: Tokens
    """
    The tokens.
    """


class VariantFigures(BaseModel):
    """
    One variant's figures.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    broken: list[FlippedTask]
    """
    Tasks base did and this variant did not.
    """
    executions: Annotated[int, Field(ge=0)]
    """
    Executions of a task that ended (repeats counted each).
    """
    fixed: list[FlippedTask]
    """
    Tasks base did not do and this variant did (by most of their executions).
    """
    flaky: list[str]
    """
    Tasks whose executions did not all end the same (with repeats: flaky, not changed).
    """
    judge_passed: Share
    """
    Of the judged executions, the share the gate passed.
    """
    mean_score: float | None
    """
    The mean score of the scored executions.
    """
    name: str
    """
    The variant.
    """
    pass_rate: Share
    """
    The share of executions whose task was done.
    """
    score_difference: Difference | None
    """
    Against `base`, task by task: the mean of (this variant's mean score − base's).
    """
    sign_test_p: float
    """
    The exact sign test's p-value, fixed against broken.
    """
    tests_passed: Share
    """
    Of the executions with tests, the share whose tests passed.
    """
    totals: Totals
    """
    Cost, tokens, calls and time.
    """
    unfinished: Annotated[int, Field(ge=0)]
    """
    Executions not ended yet.
    """


class Waiting(BaseModel):
    """
    A verdict waiting for a person.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    at: Annotated[int, Field(ge=0)]
    """
    When.
    """
    attempt: Annotated[int, Field(ge=0)]
    """
    The attempt that was scored.
    """
    consequence: Done | Rescue | Failed | MergeConflicted | Held | Reviewed | None
    """
    What it led to.
    """
    cost: Spend | None = None
    """
    What the evaluator reported it used for this score, when it reported usage.
    """
    decision: Literal['pass'] | GateOutcome1 | Literal['fail'] | None
    """
    The decision.
    """
    dimensions: dict[str, float]
    """
    Per-dimension scores.
    """
    evaluator: str
    """
    Evaluator.
    """
    flags: list[
        Annotated[
            NearThreshold | MissingDimensions | ApprovedOverFailingScore,
            Field(discriminator='flag'),
        ]
    ]
    """
    Flags.
    """
    judged: Judged | None = None
    """
    In a git workspace: what the scored attempt had changed, as recorded before the score.
    """
    notes: str
    """
    Notes.
    """
    rescues_before: Annotated[int, Field(ge=0)]
    """
    Rescues the task had before this score.
    """
    rolled_back: bool
    """
    A later rollback went back before this decision (it stays in the audit).
    """
    run: str
    """
    The run.
    """
    score: float
    """
    Score.
    """
    seq: Annotated[int, Field(ge=0)]
    """
    Seq of the `EvalScored` event.
    """
    task: str
    """
    The task.
    """
    threshold: float | None
    """
    Threshold in force.
    """


class WhatIfResult(BaseModel):
    """
    What a what-if would have decided for one evaluator.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    borne_out: Annotated[int, Field(ge=0)]
    """
    Flips that what happened bears out.
    """
    flips: list[Flip]
    """
    Decisions that flip, each with what became of its work.
    """
    gone_against: Annotated[int, Field(ge=0)]
    """
    Flips that what happened goes against.
    """
    passed: Annotated[int, Field(ge=0)]
    """
    Passes the recorded decisions had.
    """
    passes_now: Annotated[int, Field(ge=0)]
    """
    Passes the what-if would have.
    """


class WordedDecision(BaseModel):
    """
    An eval decision as the API sends it: the audit's entry with its words.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    at: Annotated[int, Field(ge=0)]
    """
    When.
    """
    attempt: Annotated[int, Field(ge=0)]
    """
    The attempt that was scored.
    """
    consequence: Done | Rescue | Failed | MergeConflicted | Held | Reviewed | None
    """
    What it led to.
    """
    cost: Spend | None = None
    """
    What the evaluator reported it used for this score, when it reported usage.
    """
    decision: Literal['pass'] | GateOutcome1 | Literal['fail'] | None
    """
    The decision.
    """
    dimensions: dict[str, float]
    """
    Per-dimension scores.
    """
    evaluator: str
    """
    Evaluator.
    """
    flags: list[
        Annotated[
            NearThreshold | MissingDimensions | ApprovedOverFailingScore,
            Field(discriminator='flag'),
        ]
    ]
    """
    Flags.
    """
    judged: Judged | None = None
    """
    In a git workspace: what the scored attempt had changed, as recorded before the score.
    """
    notes: str
    """
    Notes.
    """
    rescues_before: Annotated[int, Field(ge=0)]
    """
    Rescues the task had before this score.
    """
    rolled_back: bool
    """
    A later rollback went back before this decision (it stays in the audit).
    """
    score: float
    """
    Score.
    """
    seq: Annotated[int, Field(ge=0)]
    """
    Seq of the `EvalScored` event.
    """
    task: str
    """
    The task.
    """
    threshold: float | None
    """
    Threshold in force.
    """
    words: AuditWords
    """
    What `runlog audit` prints for it.
    """


class Written(BaseModel):
    """
    The paths changed in one place, relative to it.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    more: Annotated[int, Field(ge=0)]
    """
    How many more were changed than are named.
    """
    paths: list[str]
    """
    The paths created, modified or deleted there (at most [`MAX_PATHS`]).
    """
    place: Annotated[Checkout | OtherRun, Field(discriminator='place')]
    """
    Where.
    """


class BoardRow(BaseModel):
    """
    One row of the board.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    agent: str | None
    """
    Agent identity.
    """
    attempt: Annotated[int, Field(ge=0)]
    """
    Attempts started.
    """
    checkpoints: tuple[Checkpoint, Checkpoint]
    """
    Checkpoints reached of those required.
    """
    class_: Annotated[TaskClass | None, Field(alias='class')]
    """
    Classification.
    """
    depth: Annotated[int, Field(ge=0)]
    """
    Nesting depth (1 = top level).
    """
    description: str
    """
    Description.
    """
    failed_children: list[str]
    """
    Failed tasks under a group (failures bubble up).
    """
    group: bool
    """
    Whether it is a group.
    """
    id: str
    """
    Task id.
    """
    note: str | None
    """
    Why it failed or was cancelled; an evaluator error while pending.
    """
    outside: list[str] | None = None
    """
    What its attempts wrote outside its worktree, an attempt a line, in words; left out
    when they wrote nothing there.
    """
    parent: str | None
    """
    Parent group.
    """
    readiness: (
        Ready | ReadinessWaiting | Blocked | CircuitOpen | ReadinessBudgetSpent | None
    )
    """
    For an open task: ready, waiting on, or blocked by.
    """
    rescues: Annotated[int, Field(ge=0)]
    """
    Eval rescues since last opened.
    """
    score: float | None
    """
    Last eval score.
    """
    spend: Spend
    """
    What its commands used.
    """
    status: TaskStatus
    """
    Status (derived from children for a group).
    """
    test_failures: Annotated[int, Field(ge=0)]
    """
    Test failures since last opened.
    """
    worktree: str | None
    """
    Worktree.
    """


class CallsView(BaseModel):
    """
    A task's model calls and what they spent together.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    calls: list[CallShown]
    """
    Its calls, in the order they were recorded.
    """
    run: str
    """
    The run.
    """
    task: str
    """
    The task.
    """
    total: Spend
    """
    What they used and cost.
    """


class Cell(BaseModel):
    """
    One variant's executions of one task.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    cost_usd: float
    """
    The mean cost.
    """
    done: Share
    """
    Executions ended done, of those ended.
    """
    executions: list[Execution]
    """
    Each execution: its rerun (none for the recording) and its outcome, once ended.
    """
    flip: str | None
    """
    Whether most of its executions ended otherwise than base's: `fixed` or `broken`.
    """
    mean_score: float | None
    """
    The mean score of the scored ones.
    """
    score_spread: float | None
    """
    The scores' spread (highest − lowest) across repeats.
    """
    variant: str
    """
    The variant.
    """


class CostView(BaseModel):
    """
    The cost of a run at a seq.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    budgets: list[BudgetLeft]
    """
    The run's budget and each task's, where set.
    """
    by: CostBy
    """
    How the rows are grouped.
    """
    rows: list[CostRow]
    """
    The rows, in first-recorded order.
    """
    run: str
    """
    The run.
    """
    seq: Annotated[int, Field(ge=0)]
    """
    The seq it is at.
    """
    total: Spend
    """
    The run as a whole.
    """


class DidNotFit(BaseModel):
    """
    A call whose worst case did not fit what a budget had left with no call in flight to free
    room (the `model-call-did-not-fit` event): it was refused, and its task starts no other
    attempt (their first call would not fit either) until a budget is changed.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    budget: BudgetStop
    """
    The budget, its limit and what was spent.
    """
    reservation: Reservation
    """
    The call and its worst case, priced.
    """


class DiffView(BaseModel):
    """
    The diff as its JSON body (the CLI's `--json` and the API's): the diff, and `rerun` when one
    side is a rerun of the other.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    rerun: RerunCalls | None = None
    """
    How the rerun's calls were answered.
    """
    stages: list[StageDiff]
    """
    Stage results that differ.
    """
    tasks: list[TaskDiff]
    """
    Tasks that differ, in plan order (left's order, then right-only tasks).
    """


class EvaluatorReport(BaseModel):
    """
    One evaluator, across the verdicts a report takes.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    dimensions: dict[str, float]
    """
    Mean score per dimension.
    """
    drift: Drift
    """
    Over time and versions.
    """
    evaluator: str
    """
    The eval command.
    """
    fails: Annotated[int, Field(ge=0)]
    """
    Fails.
    """
    false_fail: Rate
    """
    Rescues and fails that what happened afterwards contradicted.
    """
    false_pass: Rate
    """
    Passes that what happened afterwards contradicted.
    """
    held: Annotated[int, Field(ge=0)]
    """
    Held for a person's review.
    """
    histogram: list[HistogramItem]
    """
    Scores in ten bins of 0.1 (the last holds 1.0).
    """
    models: list[str]
    """
    The models it said it asked.
    """
    passes: Annotated[int, Field(ge=0)]
    """
    Passes.
    """
    people: Agreement
    """
    Against people's decisions.
    """
    rescues: Annotated[int, Field(ge=0)]
    """
    Rescues.
    """
    retest: Retest
    """
    The same work judged again.
    """
    runs: Annotated[int, Field(ge=0)]
    """
    Runs they were given in.
    """
    score_mean: float
    """
    Mean score.
    """
    score_sd: float
    """
    Standard deviation of the scores.
    """
    threshold: float
    """
    The threshold in force at its latest verdict.
    """
    unchanged_rises: list[VerdictRef]
    """
    Scores that rose after a rescue whose attempt changed nothing but whitespace.
    """
    verdicts: Annotated[int, Field(ge=0)]
    """
    Verdicts.
    """
    versions: list[str]
    """
    The versions it said it was.
    """
    what_if: WhatIfResult | None = None
    """
    The what-if asked for, if any.
    """


class RunFinished(BaseModel):
    """
    The run ended.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    outcome: Literal['succeeded'] | RunOutcome1 | RunOutcome2
    """
    How.
    """
    type: Literal['run-finished']


class PlanRevised(BaseModel):
    """
    The plan was revised: tasks cancelled, added, and which replaces which.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    added: list[TaskSpec]
    """
    New tasks.
    """
    cancelled: list[str]
    """
    Pending tasks superseded by the revision.
    """
    plan_hash: Annotated[str, Field(pattern='^[0-9a-f]{64}$')]
    """
    Hash of the remaining plan's content, to detect regeneration loops.
    """
    reason: str
    """
    Why.
    """
    replaces: list[Replacement]
    """
    Which new task replaces which cancelled one.
    """
    type: Literal['plan-revised']


class UsageRecorded(BaseModel):
    """
    What one of an attempt's commands reported it used (tokens, model, cost), added up per
    model and per whether the cost was reported or priced by runlog.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    type: Literal['usage-recorded']
    usage: UsageRecord
    """
    The record.
    """


class UsageClaimed(BaseModel):
    """
    What a command printed it used for calls the gateway measured: kept as its claim,
    beside the measure, and never counted (the calls' own records are).
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    type: Literal['usage-claimed']
    usage: UsageRecord
    """
    The claim, as a usage record.
    """


class RerunStarted(BaseModel):
    """
    This run is a rerun of a recorded one (right after its fork): where its model calls'
    answers come from, the tasks it runs again, the specs a workflow file changed.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    answers: Answers
    """
    Where answers come from.
    """
    from_run: str
    """
    The recorded run whose calls answer this one's.
    """
    from_seq: Annotated[int, Field(ge=0)]
    """
    The seq of that run it re-executes from.
    """
    specs: list[TaskSpec]
    """
    Tasks whose spec a workflow file given to the rerun changes (same ids, same order of
    work): their commands, tests and evaluators from then on.
    """
    tasks: list[RerunTask]
    """
    Tasks run again from `from_seq` though the fork holds them further on (`--task`, or
    running at `from_seq`).
    """
    type: Literal['rerun-started']


class WroteOutside(BaseModel):
    """
    An attempt changed files outside its own worktree, in places runlog watches; with the
    policy in force (whether the attempt fails for it).
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    attempt: Annotated[int, Field(ge=0)]
    """
    Its attempt.
    """
    policy: OutsidePolicy
    """
    The policy in force: whether the attempt fails for it.
    """
    task: str
    """
    The task.
    """
    written: list[Written]
    """
    Each place, with what changed there.
    """
    type: Literal['wrote-outside']


class ExperimentDefined(BaseModel):
    """
    An experiment was defined: its suite pinned, its variants, repeats and budget. First in
    the experiment's register ([`crate::experiment::register_of`]).
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    answers: Answers
    """
    Where the reruns' calls are answered from.
    """
    max_cost_usd: float | None
    """
    The most its live calls may cost, in USD (raised by `experiment resume`).
    """
    name: str
    """
    Its name.
    """
    repeat: Annotated[int, Field(ge=0)]
    """
    How many times each variant runs each suite run; above 1, `base` also runs live.
    """
    seed: Annotated[int, Field(ge=0)]
    """
    The bootstrap's seed: the report's intervals are the same every time it is made.
    """
    skipped: list[Skipped]
    """
    Suite runs a variant cannot be applied to, with why: counted in the report.
    """
    suite: list[SuiteRun]
    """
    The recorded runs it executes again, each pinned at its head then.
    """
    variants: list[Variant]
    """
    The variants, in the order given (`base` is not among them).
    """
    type: Literal['experiment-defined']


class ModelCallDidNotFit(BaseModel):
    """
    A model call's worst case did not fit what a budget had left, with no call in flight to
    free room: refused before it left (its `model-called` follows, `over-budget`), and its
    task starts no other attempt until a budget is changed.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    budget: BudgetStop
    """
    The budget, its limit and what was spent.
    """
    reservation: Reservation
    """
    The call and its worst case, priced.
    """
    type: Literal['model-call-did-not-fit']


class Experiment(BaseModel):
    """
    An experiment as defined (the `experiment-defined` event's record, first in its register).
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    answers: Answers
    """
    Where the reruns' calls are answered from.
    """
    max_cost_usd: float | None
    """
    The most its live calls may cost, in USD (raised by `experiment resume`).
    """
    name: str
    """
    Its name.
    """
    repeat: Annotated[int, Field(ge=0)]
    """
    How many times each variant runs each suite run; above 1, `base` also runs live.
    """
    seed: Annotated[int, Field(ge=0)]
    """
    The bootstrap's seed: the report's intervals are the same every time it is made.
    """
    skipped: list[Skipped]
    """
    Suite runs a variant cannot be applied to, with why: counted in the report.
    """
    suite: list[SuiteRun]
    """
    The recorded runs it executes again, each pinned at its head then.
    """
    variants: list[Variant]
    """
    The variants, in the order given (`base` is not among them).
    """


class JudgesReport(BaseModel):
    """
    Every evaluator's report.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    evaluators: list[EvaluatorReport]
    """
    By evaluator, by their command.
    """
    runs: Annotated[int, Field(ge=0)]
    """
    Runs read.
    """
    verdicts: Annotated[int, Field(ge=0)]
    """
    Verdicts taken.
    """
    what_if: WhatIf | None = None
    """
    The what-if asked for.
    """


class OutsideWrites(BaseModel):
    """
    What an attempt wrote outside its worktree (the `wrote-outside` event's record).
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    attempt: Annotated[int, Field(ge=0)]
    """
    Its attempt.
    """
    policy: OutsidePolicy
    """
    The policy in force: whether the attempt fails for it.
    """
    task: str
    """
    The task.
    """
    written: list[Written]
    """
    Each place, with what changed there.
    """


class Rerun(BaseModel):
    """
    A rerun (the `rerun-started` event's record), recorded right after its fork.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    answers: Answers
    """
    Where answers come from.
    """
    from_run: str
    """
    The recorded run whose calls answer this one's.
    """
    from_seq: Annotated[int, Field(ge=0)]
    """
    The seq of that run it re-executes from.
    """
    specs: list[TaskSpec]
    """
    Tasks whose spec a workflow file given to the rerun changes (same ids, same order of
    work): their commands, tests and evaluators from then on.
    """
    tasks: list[RerunTask]
    """
    Tasks run again from `from_seq` though the fork holds them further on (`--task`, or
    running at `from_seq`).
    """


class Row(BaseModel):
    """
    One run as `runs` lists it (and the API's `GET /v1/runs`).
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    events: Annotated[int, Field(ge=0)]
    """
    Events recorded.
    """
    fork_at: Annotated[int | None, Field(ge=0)]
    """
    The seq of that run it was forked at.
    """
    fork_of: str | None
    """
    The run it was forked from.
    """
    last_ms: Annotated[int | None, Field(ge=0)]
    """
    When its latest event happened (with `started_ms`, how long it has run).
    """
    outcome: Literal['succeeded'] | RunOutcome1 | RunOutcome2 | None
    """
    How it finished, once it has.
    """
    run: str
    """
    The run.
    """
    started_ms: Annotated[int | None, Field(ge=0)]
    """
    When it started.
    """
    status: str
    """
    Its status word, or `damaged`.
    """
    sub_project_of: str | None = None
    """
    For a sub-project's child run: `RUN/TASK` of its parent.
    """
    workflow: str | None
    """
    The workflow file it was started from.
    """


class TaskRow(BaseModel):
    """
    A task of the suite and what each variant made of it.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    cells: list[Cell]
    """
    One cell per variant, in the report's order.
    """
    run: str
    """
    The suite run.
    """
    task: str
    """
    The task.
    """


class Timeline(BaseModel):
    """
    A run over time.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    end: Annotated[int, Field(ge=0)]
    """
    Its last event's time.
    """
    head: Annotated[int, Field(ge=0)]
    """
    Its last seq.
    """
    marks: list[Mark]
    """
    What happened to the whole run: rollbacks, stops, resumes, its end.
    """
    rows: list[TimelineRow]
    """
    A row per task, in the order they joined the plan.
    """
    start: Annotated[int, Field(ge=0)]
    """
    Its first event's time.
    """


class Worded(BaseModel):
    """
    An event as the API sends it: its line (seq, time, kind) and the same words `runlog log`
    prints for it, so that the web view and the CLI cannot word it differently.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    at: Annotated[int, Field(ge=0)]
    """
    When, in ms since the epoch.
    """
    event: Annotated[
        RunStarted
        | RunFinished
        | RunInterrupted
        | EventKindForked
        | RolledBack
        | TaskAdded
        | ReplanRequested
        | PlanRevised
        | TaskStarted
        | TaskSubmitted
        | TestsStarted
        | TestsPassed
        | TestsFailed
        | EvalScored
        | GateDecided
        | TaskApproved
        | TaskRejected
        | TaskFailed
        | TaskCancelled
        | TaskReopened
        | CheckpointReached
        | TaskClassified
        | MessagePosted
        | StageStarted
        | StageCompleted
        | StageFailed
        | RetryScheduled
        | CircuitOpened
        | CircuitClosed
        | StrategySet
        | PendingValidation
        | EvalErrored
        | RunResumed
        | ReplanLoopDetected
        | OutputRecorded
        | Attributed
        | TestsDiscovered
        | SubProjectDeclared
        | ChildRunStarted
        | ParentLinked
        | ChildRunEnded
        | WorkerClaimed
        | AttemptAbandoned
        | WorkspaceOpened
        | ChangesRecorded
        | TaskMerged
        | EventKindMergeConflicted
        | UsageRecorded
        | PricesSet
        | BudgetSet
        | BudgetSpent
        | SecretsRedacted
        | RunForgotten
        | ModelCalled
        | UsageClaimed
        | RerunStarted
        | CallDiverged
        | ReviewSet
        | ReviewHeld
        | EvaluatorNamed
        | EventKindAnswerMapped
        | WroteOutside
        | ExperimentDefined
        | EventKindExperimentRerun
        | ExperimentBudgetSet
        | ModelCallReserved
        | ModelCallDidNotFit
        | EventKindAlertSent
        | CommandKeyed,
        Field(discriminator='type'),
    ]
    """
    What happened.
    """
    seq: Annotated[int, Field(ge=0)]
    """
    Its seq in the run.
    """
    words: str
    """
    What it says, in words.
    """


class WordedAudit(BaseModel):
    """
    A run's audit as the API sends it: each decision with its words.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    entries: list[WordedDecision]
    """
    Every eval decision, in order.
    """
    out_of_gate: list[
        Annotated[
            Approved | Rejected | EvalError | OutOfGateSecretsRedacted,
            Field(discriminator='kind'),
        ]
    ]
    """
    Decisions made outside the gate (by a person, by an evaluator's error), in order.
    """


class AuditView(BaseModel):
    """
    Every eval decision with its words, the decisions taken outside the gate, and the run's
    summary.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    audit: WordedAudit
    """
    Its decisions.
    """
    run: str
    """
    The run.
    """
    summary: RunSummary
    """
    What happened over the whole run.
    """


class Board(BaseModel):
    """
    The board: rows in plan order, children right after their parent.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    budgets: list[BudgetLeft]
    """
    The run's budget and the tasks' own, with what is left.
    """
    paused_for_replan: str | None
    """
    Dispatch is paused for a replan after this task.
    """
    rows: list[BoardRow]
    """
    Rows.
    """
    spend: Spend
    """
    What the run's commands used.
    """


class Child(BaseModel):
    """
    A sub-project task's child run (one level: a child's own view shows its children).
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    board: Board | None = None
    """
    Its board at its head, when it could be read.
    """
    error: str | None = None
    """
    Why it could not be read.
    """
    run: str
    """
    The child run.
    """
    status: str | None = None
    """
    Its status word, when it could be read.
    """
    task: str
    """
    The task.
    """


class EventsPage(BaseModel):
    """
    One page of a run's events, each with its words, and where the next page starts.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    events: list[Worded]
    """
    The page's events, in order.
    """
    head: Annotated[int, Field(ge=0)]
    """
    Its head seq.
    """
    next: Annotated[int | None, Field(ge=0)]
    """
    The seq the next page starts at, when there is more.
    """
    run: str
    """
    The run.
    """


class Figures(BaseModel):
    """
    The report.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    tasks: list[TaskRow]
    """
    Each task of the suite, by run.
    """
    variants: list[VariantFigures]
    """
    Each variant, `base` first.
    """


class Recorded(BaseModel):
    """
    The events a command recorded, with their words, and the run's head after them.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    events: list[Worded]
    """
    The events it recorded.
    """
    head: Annotated[int, Field(ge=0)]
    """
    Its head seq after the command.
    """
    replayed: bool
    """
    The command had been sent before with its idempotency key: these are the events it
    recorded then, and nothing was recorded now.
    """
    run: str
    """
    The run.
    """


class TaskView(BaseModel):
    """
    A task's story.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    calls: CallsView
    """
    Its model calls, each with what was new in its request and what the model answered.
    """
    events: list[Worded]
    """
    Every event about it, in order, each with its words: its attempts, their output, tests
    and verdicts, and the changes each attempt recorded (`changes-recorded`, with the patch
    or its beginning).
    """
    run: str
    """
    The run.
    """
    spec: TaskSpec
    """
    The task as planned.
    """
    task: BoardRow | None
    """
    Its row on the run's board at its head.
    """


class BoardView(BaseModel):
    """
    The board of a run at a seq, with the edges the board does not hold, the child runs of its
    sub-project tasks and its parent.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    board: Board
    """
    The task board.
    """
    children: list[Child]
    """
    Each sub-project task's child run, with its board at its head.
    """
    links: list[Link]
    """
    What each task waits for as its plan names it, and what replaced it.
    """
    parent: ParentLink | None
    """
    For a child run: its parent run and task.
    """
    run: str
    """
    The run.
    """
    seq: Annotated[int, Field(ge=0)]
    """
    The seq the board is at.
    """
    status: str
    """
    The run's status word (running, finished, interrupted...).
    """


class ExperimentView(BaseModel):
    """
    An experiment's report.
    """

    model_config = ConfigDict(
        populate_by_name=True,
    )
    answers: Answers
    """
    Where the reruns' answers come from.
    """
    defined_ms: Annotated[int, Field(ge=0)]
    """
    When it was defined (ms since the epoch).
    """
    figures: Figures
    """
    The figures.
    """
    max_cost_usd: float | None
    """
    The budget for live calls, in USD.
    """
    name: str
    """
    Its name.
    """
    progress: Progress
    """
    How far it has gone.
    """
    repeat: Annotated[int, Field(ge=0)]
    """
    Repeats.
    """
    skipped: list[Skipped]
    """
    Runs a variant was not applied to, with why.
    """
    suite: list[SuiteStatus]
    """
    The suite, each run as pinned and whether it is still in the store.
    """
    variants: list[VariantInfo]
    """
    The variants (`base` first: the recording).
    """


Value.model_rebuild()
