// Generated from runlog's Rust views by `tests/web_types.rs` (ts-rs): do not edit.
// Regenerate: RUNLOG_WRITE_TYPES=1 cargo test -p runlog-cli --test web_types

/**
 * What a call added to its attempt's conversation. Agents send the whole conversation with
 * every call: the turns an earlier call of the attempt had sent, or was answered with, are
 * named by count, and only the rest are given.
 */
export type Added = { 
/**
 * How many of its request's first turns an earlier call of the attempt had (its request,
 * then its answer).
 */
kept: number, 
/**
 * The seq of that call, when `kept` is not 0.
 */
kept_from: number | null, 
/**
 * Its request's turns after those, in order.
 */
added: Array<Turn>, 
/**
 * The model's answer, as the turns its agent sends back (one, or one per output item of
 * OpenAI Responses); none when the answer was not one (an error, a refusal).
 */
reply: Array<Turn>, };

/**
 * An agent identity; a rescue must reuse the identity of the attempt it rescues.
 */
export type AgentId = string;

/**
 * The gate's pass or not against a person's, over the labelled verdicts.
 */
export type Agreement = { 
/**
 * The gate passed and the person approved.
 */
both_pass: number, 
/**
 * The gate passed and the person rejected or reopened.
 */
gate_pass_person_fail: number, 
/**
 * The gate did not pass and the person approved.
 */
gate_fail_person_pass: number, 
/**
 * Neither passed.
 */
both_fail: number, 
/**
 * The labelled verdicts (the four cells).
 */
n: number, 
/**
 * The share of them where the gate decided as the person did.
 */
accuracy: number | null, 
/**
 * Cohen's kappa: agreement beyond what the two rates alone would give by chance (1 is
 * full agreement, 0 chance); none when it is undefined (under two labels, or both sides
 * always giving one answer).
 */
kappa: number | null, 
/**
 * The verdicts no person looked at.
 */
unlabelled: number, };

/**
 * What an alert is about (`on` in `[[alerts]]`).
 */
export type AlertOn = "run-failed" | "waiting" | "budget" | "diverged" | "test";

/**
 * A delivery of an alert (the `alert-sent` event): where, how many tries, how it ended.
 */
export type AlertSent = { 
/**
 * What about.
 */
on: AlertOn, 
/**
 * The seq of the event that raised it (0 for a test).
 */
seq: number, 
/**
 * Where it went: the receiver's scheme and host (its path may be a secret, as Slack's is).
 */
to: string, 
/**
 * Tries made.
 */
attempts: number, 
/**
 * The last answer's status, when there was one.
 */
status: number | null, 
/**
 * Why it was not delivered, when it was not (the last try's error); none once delivered.
 */
error: string | null, };

/**
 * A rerun's call answered from the recording with the recording's places given as the
 * rerun's (the `answer-mapped` event's record, right before the call's own).
 */
export type AnswerMapped = { 
/**
 * The task.
 */
task: TaskId, 
/**
 * The rerun's attempt.
 */
attempt: number, 
/**
 * Which command.
 */
stage: UsageStage, 
/**
 * The call's number among the command's calls, from 1.
 */
n: number, 
/**
 * The seq of the recorded call whose answer it was given, in the run rerun.
 */
recorded_seq: number, 
/**
 * What was mapped, and how often.
 */
mapped: Array<Mapped>, };

/**
 * How a rerun's calls were answered, from its own events.
 */
export type Answered = { 
/**
 * Calls answered from the recording ($0.00).
 */
recorded: number, 
/**
 * Calls that went to a provider.
 */
live: number, 
/**
 * What the live calls cost, where priced.
 */
live_cost_usd: number, 
/**
 * Calls refused as they diverged.
 */
refused: number, 
/**
 * Each attempt's first divergence, in words.
 */
divergences: Array<string>, };

/**
 * Where a rerun's model calls are answered from.
 */
export type Answers = "recorded" | "live" | "recorded-then-live";

/**
 * Why an audit entry deserves a second look.
 */
export type AuditFlag = { "flag": "near-threshold", 
/**
 * Score minus threshold.
 */
margin: number, } | { "flag": "missing-dimensions", 
/**
 * The missing names; empty when the evaluator gave no dimensions at all.
 */
missing: Array<string>, } | { "flag": "approved-over-failing-score", 
/**
 * Who.
 */
by: string, 
/**
 * The seq of the approval.
 */
seq: number, };

/**
 * Every eval decision with its words, the decisions taken outside the gate, and the run's
 * summary.
 */
export type AuditView = { 
/**
 * The run.
 */
run: string, 
/**
 * Its decisions.
 */
audit: WordedAudit, 
/**
 * What happened over the whole run.
 */
summary: RunSummary, };

/**
 * An eval decision in words, as `runlog audit` prints it and the web view shows it.
 */
export type AuditWords = { 
/**
 * The gate's decision and the threshold in force (`pass at threshold 0.7`).
 */
decision: string, 
/**
 * What it led to (`done at seq 12; ready: b`), empty while it is pending.
 */
consequence: string, 
/**
 * Why a person should look twice, each in words.
 */
flags: Array<string>, };

/**
 * Something that took time.
 */
export type Bar = { 
/**
 * What.
 */
kind: BarKind, 
/**
 * The attempt it belongs to (0 when none had started).
 */
attempt: number, 
/**
 * When it began, ms since the epoch.
 */
from: Timestamp, 
/**
 * When it ended (the last event so far, while `open`).
 */
to: Timestamp, 
/**
 * The seqs of the events it covers.
 */
seqs: [number, number], 
/**
 * Still going at the last event.
 */
open: boolean, 
/**
 * Why it failed, when it did.
 */
failed: string | null, };

/**
 * What a bar stands for.
 */
export type BarKind = "attempt" | "tests" | "eval" | "merge" | "wait";

/**
 * The board: rows in plan order, children right after their parent.
 */
export type Board = { 
/**
 * Rows.
 */
rows: Array<BoardRow>, 
/**
 * Dispatch is paused for a replan after this task.
 */
paused_for_replan: TaskId | null, 
/**
 * What the run's commands used.
 */
spend: Spend, 
/**
 * The run's budget and the tasks' own, with what is left.
 */
budgets: Array<BudgetLeft>, };

/**
 * One row of the board.
 */
export type BoardRow = { 
/**
 * Task id.
 */
id: TaskId, 
/**
 * Description.
 */
description: string, 
/**
 * Status (derived from children for a group).
 */
status: TaskStatus, 
/**
 * For an open task: ready, waiting on, or blocked by.
 */
readiness: Readiness | null, 
/**
 * Parent group.
 */
parent: TaskId | null, 
/**
 * Nesting depth (1 = top level).
 */
depth: number, 
/**
 * Whether it is a group.
 */
group: boolean, 
/**
 * Attempts started.
 */
attempt: number, 
/**
 * Eval rescues since last opened.
 */
rescues: number, 
/**
 * Test failures since last opened.
 */
test_failures: number, 
/**
 * Agent identity.
 */
agent: AgentId | null, 
/**
 * Worktree.
 */
worktree: string | null, 
/**
 * Last eval score.
 */
score: number | null, 
/**
 * Checkpoints reached of those required.
 */
checkpoints: [number, number], 
/**
 * Classification.
 */
class: TaskClass | null, 
/**
 * Failed tasks under a group (failures bubble up).
 */
failed_children: Array<TaskId>, 
/**
 * Why it failed or was cancelled; an evaluator error while pending.
 */
note: string | null, 
/**
 * What its commands used.
 */
spend: Spend, 
/**
 * What its attempts wrote outside its worktree, an attempt a line, in words; left out
 * when they wrote nothing there.
 */
outside?: Array<string>, };

/**
 * The board of a run at a seq, with the edges the board does not hold, the child runs of its
 * sub-project tasks and its parent.
 */
export type BoardView = { 
/**
 * The run.
 */
run: string, 
/**
 * The seq the board is at.
 */
seq: number, 
/**
 * The run's status word (running, finished, interrupted...).
 */
status: string, 
/**
 * The task board.
 */
board: Board, 
/**
 * What each task waits for as its plan names it, and what replaced it.
 */
links: Array<Link>, 
/**
 * Each sub-project task's child run, with its board at its head.
 */
children: Array<Child>, 
/**
 * For a child run: its parent run and task.
 */
parent: ParentLink | null, };

/**
 * A body kept in the store's blob area: its hash and its size.
 */
export type Body = { 
/**
 * The blob's hash.
 */
blob: Hash, 
/**
 * Its size in bytes.
 */
bytes: number, };

/**
 * What bounds an unlimited retry strategy.
 */
export type Budget = { 
/**
 * Total attempts of the task, first one included.
 */
max_attempts: number | null, 
/**
 * Milliseconds from the task's first start.
 */
max_elapsed_ms: number | null, };

/**
 * What a budget bounds.
 */
export type BudgetKind = "cost-usd" | "tokens";

/**
 * A budget and what is left of it.
 */
export type BudgetLeft = { 
/**
 * The task whose budget it is, or none for the run's.
 */
task: string | null, 
/**
 * The bounds.
 */
limits: Limits, 
/**
 * Dollars left (0 once spent), when bounded.
 */
usd_left: number | null, 
/**
 * Tokens left (0 once spent), when bounded.
 */
tokens_left: number | null, 
/**
 * Calls in flight holding their worst case against it (`model-call-reserved` not yet
 * settled by their `model-called`); left out of JSON, with what they hold, when none is.
 */
in_flight?: number, 
/**
 * Dollars those calls hold at most (of the priced ones).
 */
held_usd?: number, 
/**
 * Tokens those calls hold at most.
 */
held_tokens?: number, };

/**
 * A budget found spent, and whose.
 */
export type BudgetStop = { 
/**
 * The task whose own budget it is, or none for the run's.
 */
budget: TaskId | null, 
/**
 * Dollars or tokens.
 */
kind: BudgetKind, 
/**
 * The limit in force.
 */
limit: number, 
/**
 * What was spent.
 */
spent: number, };

/**
 * How a call ended.
 */
export type CallEnd = { "end": "answered" } | { "end": "upstream-failed" } | { "end": "client-gone" } | { "end": "over-budget", 
/**
 * Whose budget, its limit and the spend, in words.
 */
spent: string, } | { "end": "refused" } | { "end": "interrupted" } | { "end": "replayed", 
/**
 * The seq of the recorded call, in the run rerun.
 */
seq: number, } | { "end": "diverged" } | { "end": "rate-limited", 
/**
 * The limit, in words (`requests_per_minute = 30`).
 */
limit: string, 
/**
 * When the command was told to come back, in milliseconds.
 */
retry_after_ms: number, };

/**
 * One call with its conversation in words.
 */
export type CallShown = { 
/**
 * The seq of its `model-called` event.
 */
seq: number, 
/**
 * Its provider, API, model, end, time, tokens and cost on one line.
 */
headline: string, 
/**
 * What was new in its request, in words.
 */
asked: string, 
/**
 * What the model answered, in words.
 */
answered: string, 
/**
 * In a rerun, the recorded run's places (worktrees, branches, store) its recorded answer
 * was given as the rerun's, and how often; empty when none were.
 */
mapped: Array<Mapped>, 
/**
 * The conversation, when asked for.
 */
turns: Added | null, 
/**
 * The task whose command made it (for the replanner, the task whose completion asked
 * for it).
 */
task: TaskId, 
/**
 * The attempt.
 */
attempt: number, 
/**
 * Which of the attempt's commands.
 */
stage: UsageStage, 
/**
 * Its number among that command's calls, from 1.
 */
n: number, 
/**
 * The provider, as the workflow names it (`anthropic`, `openai`, or a `[providers]`
 * table's name).
 */
provider: string, 
/**
 * The API it spoke.
 */
api: ModelApi, 
/**
 * The model: the one that answered, else the one asked for.
 */
model: string | null, 
/**
 * Whether the answer was streamed (server-sent events).
 */
streamed: boolean, 
/**
 * The HTTP status the command was given (0 when none was).
 */
status: number, 
/**
 * How it ended.
 */
end: CallEnd, 
/**
 * Milliseconds from the request to the provider's first byte, when one came.
 */
first_byte_ms: number | null, 
/**
 * Milliseconds from the request to the answer's last byte (or the end).
 */
duration_ms: number, 
/**
 * The usage the provider returned.
 */
tokens: Tokens, 
/**
 * The cost in USD: the provider's, or priced with the run's prices, or unknown.
 */
cost_usd: number | null, 
/**
 * Where the cost comes from.
 */
cost: CostSource, 
/**
 * The request as sent (secrets replaced).
 */
request: Body | null, 
/**
 * The answer as it came: for a stream, its events as they passed.
 */
response: Body | null, 
/**
 * For a stream, the message its events put together.
 */
assembled: Body | null, 
/**
 * What went wrong, when something did.
 */
error: string | null, };

/**
 * A task's model calls and what they spent together.
 */
export type CallsView = { 
/**
 * The run.
 */
run: string, 
/**
 * The task.
 */
task: string, 
/**
 * Its calls, in the order they were recorded.
 */
calls: Array<CallShown>, 
/**
 * What they used and cost.
 */
total: Spend, };

/**
 * One variant's executions of one task.
 */
export type Cell = { 
/**
 * The variant.
 */
variant: string, 
/**
 * Executions ended done, of those ended.
 */
done: Share, 
/**
 * The mean score of the scored ones.
 */
mean_score: number | null, 
/**
 * The scores' spread (highest − lowest) across repeats.
 */
score_spread: number | null, 
/**
 * The mean cost.
 */
cost_usd: number, 
/**
 * Whether most of its executions ended otherwise than base's: `fixed` or `broken`.
 */
flip: string | null, 
/**
 * Each execution: its rerun (none for the recording) and its outcome, once ended.
 */
executions: Array<Execution>, };

/**
 * What verifying one run found (`verify --json`, the API's `GET /v1/runs/{run}/verify`).
 * Fields in the alphabetical order `--json` has always printed them in.
 */
export type Checked = { 
/**
 * The first damage, if any.
 */
damage: Found | null, 
/**
 * The run's head.
 */
head_seq: number | null, 
/**
 * No damage.
 */
ok: boolean, 
/**
 * The run.
 */
run: string, 
/**
 * Events verified (before the damage, if any).
 */
verified: number, 
/**
 * For a forgotten run: its tombstone (its events are gone; the tombstone is verified
 * with the register of forgotten runs).
 */
forgotten: Tombstone | null, };

/**
 * A sub-project task's child run (one level: a child's own view shows its children).
 */
export type Child = { 
/**
 * The task.
 */
task: TaskId, 
/**
 * The child run.
 */
run: RunId, 
/**
 * Its status word, when it could be read.
 */
status?: string, 
/**
 * Its board at its head, when it could be read.
 */
board?: Board, 
/**
 * Why it could not be read.
 */
error?: string, };

/**
 * Circuit breaker state of a stage.
 */
export type Circuit = "closed" | "open";

/**
 * What a gate decision led to.
 */
export type Consequence = { "consequence": "done", 
/**
 * Dependents that became ready.
 */
ready: Array<TaskId>, 
/**
 * The seq of the decision.
 */
at_seq: number, 
/**
 * In a git workspace: the seq of the merge into the integration branch, where the
 * dependents in `ready` became ready.
 */
merged_at?: number, } | { "consequence": "rescue", 
/**
 * Rescue number.
 */
n: number, } | { "consequence": "failed" } | { "consequence": "merge-conflicted", 
/**
 * The files in conflict.
 */
files: Array<string>, 
/**
 * The rescue the task was sent back for; none: it waits for a person.
 */
rescue: number | null, 
/**
 * The seq of the conflict.
 */
at_seq: number, } | { "consequence": "held" } | { "consequence": "reviewed", 
/**
 * Who.
 */
by: string, 
/**
 * Approved (done), else rejected.
 */
approved: boolean, 
/**
 * Rejected and reopened for another try.
 */
reopen: boolean, 
/**
 * The seq of the decision.
 */
at_seq: number, };

/**
 * What the rows of a cost report are.
 */
export type CostBy = "task" | "model" | "stage" | "attempt" | "call";

/**
 * One row: what one key spent.
 */
export type CostRow = { 
/**
 * The task, model, stage or `TASK#ATTEMPT`.
 */
key: string, 
/**
 * Tokens used.
 */
tokens: Tokens, 
/**
 * USD, reported or priced.
 */
cost_usd: number, 
/**
 * Usage records whose cost is unknown (their tokens count, their dollars cannot).
 */
unpriced: number, };

/**
 * Where a recorded cost comes from.
 */
export type CostSource = "reported" | "priced" | "unpriced";

/**
 * The cost of a run at a seq.
 */
export type CostView = { 
/**
 * The run.
 */
run: string, 
/**
 * The seq it is at.
 */
seq: number, 
/**
 * The run as a whole.
 */
total: Spend, 
/**
 * How the rows are grouped.
 */
by: CostBy, 
/**
 * The rows, in first-recorded order.
 */
rows: Array<CostRow>, 
/**
 * The run's budget and each task's, where set.
 */
budgets: Array<BudgetLeft>, };

/**
 * A call whose worst case did not fit what a budget had left with no call in flight to free
 * room (the `model-call-did-not-fit` event): it was refused, and its task starts no other
 * attempt (their first call would not fit either) until a budget is changed.
 */
export type DidNotFit = { 
/**
 * The call and its worst case, priced.
 */
reservation: Reservation, 
/**
 * The budget, its limit and what was spent.
 */
budget: BudgetStop, };

/**
 * The diff as its JSON body (the CLI's `--json` and the API's): the diff, and `rerun` when one
 * side is a rerun of the other.
 */
export type DiffView = { 
/**
 * How the rerun's calls were answered.
 */
rerun: RerunCalls | null, 
/**
 * Tasks that differ, in plan order (left's order, then right-only tasks).
 */
tasks: Array<TaskDiff>, 
/**
 * Stage results that differ.
 */
stages: Array<StageDiff>, };

/**
 * A paired difference with its seeded bootstrap interval.
 */
export type Difference = { 
/**
 * Tasks paired.
 */
pairs: number, 
/**
 * The mean difference.
 */
mean: number, 
/**
 * 95% interval, low end.
 */
low: number, 
/**
 * High end.
 */
high: number, };

/**
 * A dimension on both sides.
 */
export type DimensionDelta = { 
/**
 * Left value.
 */
left: number | null, 
/**
 * Right value.
 */
right: number | null, 
/**
 * Right − left, when both exist.
 */
delta: number | null, };

/**
 * A call of a rerun that did not ask what the recording asked (the `call-diverged` event's
 * record): which call, which recorded call it was compared with, and how it differs.
 */
export type Divergence = { 
/**
 * The task.
 */
task: TaskId, 
/**
 * The rerun's attempt.
 */
attempt: number, 
/**
 * Which command.
 */
stage: UsageStage, 
/**
 * The call's number among the command's calls, from 1.
 */
n: number, 
/**
 * The seq of the recorded call it was compared with, in the run rerun (none when the
 * recording has no call that far).
 */
recorded_seq: number | null, 
/**
 * How it differs, in words.
 */
why: string, 
/**
 * Whether the call went to the provider (`recorded-then-live`) or was refused.
 */
live: boolean, };

/**
 * How an evaluator's scores moved over time and across its versions.
 */
export type Drift = { 
/**
 * By week, oldest first.
 */
weeks: Array<Week>, 
/**
 * By version, in the order each first appeared.
 */
versions: Array<VersionSeen>, };

/**
 * A stage failure's class.
 */
export type ErrorType = string;

/**
 * One evaluator, across the verdicts a report takes.
 */
export type EvaluatorReport = { 
/**
 * The eval command.
 */
evaluator: string, 
/**
 * The models it said it asked.
 */
models: Array<string>, 
/**
 * The versions it said it was.
 */
versions: Array<string>, 
/**
 * Verdicts.
 */
verdicts: number, 
/**
 * Runs they were given in.
 */
runs: number, 
/**
 * Passes.
 */
passes: number, 
/**
 * Rescues.
 */
rescues: number, 
/**
 * Fails.
 */
fails: number, 
/**
 * Held for a person's review.
 */
held: number, 
/**
 * The threshold in force at its latest verdict.
 */
threshold: number, 
/**
 * Mean score.
 */
score_mean: number, 
/**
 * Standard deviation of the scores.
 */
score_sd: number, 
/**
 * Mean score per dimension.
 */
dimensions: { [key in string]: number }, 
/**
 * Scores in ten bins of 0.1 (the last holds 1.0).
 */
histogram: Array<number>, 
/**
 * Against people's decisions.
 */
people: Agreement, 
/**
 * Passes that what happened afterwards contradicted.
 */
false_pass: Rate, 
/**
 * Rescues and fails that what happened afterwards contradicted.
 */
false_fail: Rate, 
/**
 * The same work judged again.
 */
retest: Retest, 
/**
 * Scores that rose after a rescue whose attempt changed nothing but whitespace.
 */
unchanged_rises: Array<VerdictRef>, 
/**
 * Over time and versions.
 */
drift: Drift, 
/**
 * The what-if asked for, if any.
 */
what_if?: WhatIfResult, };

/**
 * Every kind of event. See the module docs for the format rule.
 */
export type EventKind = { "type": "run-started", 
/**
 * The run's id.
 */
run: RunId, 
/**
 * Workflow name (or path).
 */
workflow: string, 
/**
 * blake3 of the workflow file, to tell if a resume reads the same file.
 */
workflow_hash: Hash, 
/**
 * Settings in force.
 */
settings: Settings, } | { "type": "run-finished", 
/**
 * How.
 */
outcome: RunOutcome, } | { "type": "run-interrupted", 
/**
 * Why.
 */
reason: string, } | { "type": "forked", 
/**
 * This (new) run.
 */
run: RunId, 
/**
 * The parent run.
 */
from_run: RunId, 
/**
 * The parent's seq the fork starts from.
 */
at_seq: number, 
/**
 * The parent's chain hash at that seq, so the lineage can be verified.
 */
from_hash: Hash, } | { "type": "rolled-back", 
/**
 * The seq whose state is restored.
 */
to_seq: number, 
/**
 * Why.
 */
reason: string, 
/**
 * Who asked.
 */
by: string, } | { "type": "task-added", 
/**
 * The task (boxed to keep every event small; encoded exactly like the spec itself).
 */
spec: TaskSpec, } | { "type": "replan-requested", 
/**
 * The task whose completion triggered it.
 */
after_task: TaskId, 
/**
 * Why, in words.
 */
reason: string, 
/**
 * Files both the finished task and a pending task touch.
 */
touched_files: Array<string>, 
/**
 * Pending tasks that touch them.
 */
affected: Array<TaskId>, } | { "type": "plan-revised", 
/**
 * Pending tasks superseded by the revision.
 */
cancelled: Array<TaskId>, 
/**
 * New tasks.
 */
added: Array<TaskSpec>, 
/**
 * Which new task replaces which cancelled one.
 */
replaces: Array<Replacement>, 
/**
 * Why.
 */
reason: string, 
/**
 * Hash of the remaining plan's content, to detect regeneration loops.
 */
plan_hash: Hash, } | { "type": "task-started", 
/**
 * The task.
 */
task: TaskId, 
/**
 * The agent identity (kept across rescues).
 */
agent: AgentId, 
/**
 * The worktree (kept across rescues).
 */
worktree: string, 
/**
 * 1-based attempt number over the task's life.
 */
attempt: number, } | { "type": "task-submitted", 
/**
 * The task.
 */
task: TaskId, 
/**
 * What the agent said it did.
 */
summary: string, } | { "type": "tests-started", 
/**
 * The task.
 */
task: TaskId, 
/**
 * Attempt under test.
 */
attempt: number, } | { "type": "tests-passed", 
/**
 * The task.
 */
task: TaskId, 
/**
 * Attempt under test.
 */
attempt: number, } | { "type": "tests-failed", 
/**
 * The task.
 */
task: TaskId, 
/**
 * Attempt under test.
 */
attempt: number, 
/**
 * Failure output.
 */
details: string, } | { "type": "eval-scored", 
/**
 * The task.
 */
task: TaskId, 
/**
 * Which evaluator.
 */
evaluator: string, 
/**
 * Overall score in [0, 1].
 */
score: number, 
/**
 * Per-dimension scores in [0, 1].
 */
dimensions: { [key in string]: number }, 
/**
 * The evaluator's notes (feedback for a rescue).
 */
notes: string, } | { "type": "gate-decided", 
/**
 * The task.
 */
task: TaskId, 
/**
 * The score decided on.
 */
score: number, 
/**
 * The threshold in force.
 */
threshold: number, 
/**
 * The decision.
 */
outcome: GateOutcome, } | { "type": "task-approved", 
/**
 * The task.
 */
task: TaskId, 
/**
 * Who.
 */
by: string, } | { "type": "task-rejected", 
/**
 * The task.
 */
task: TaskId, 
/**
 * Who.
 */
by: string, 
/**
 * Back to open for another try instead of failed.
 */
reopen: boolean, 
/**
 * Why.
 */
reason: string, } | { "type": "task-failed", 
/**
 * The task.
 */
task: TaskId, 
/**
 * Why.
 */
reason: string, } | { "type": "task-cancelled", 
/**
 * The task.
 */
task: TaskId, 
/**
 * Why.
 */
reason: string, } | { "type": "task-reopened", 
/**
 * The task.
 */
task: TaskId, 
/**
 * Who.
 */
by: string, } | { "type": "checkpoint-reached", 
/**
 * The task.
 */
task: TaskId, 
/**
 * The checkpoint.
 */
name: string, } | { "type": "task-classified", 
/**
 * The task.
 */
task: TaskId, 
/**
 * The class.
 */
class: TaskClass, } | { "type": "message-posted", 
/**
 * The task it concerns, if any.
 */
task: TaskId | null, 
/**
 * Who wrote it.
 */
from: string, 
/**
 * The text.
 */
text: string, } | { "type": "stage-started", 
/**
 * The stage.
 */
stage: StageId, 
/**
 * The task running in it.
 */
task: TaskId, 
/**
 * Attempt number.
 */
attempt: number, } | { "type": "stage-completed", 
/**
 * The stage.
 */
stage: StageId, 
/**
 * The task.
 */
task: TaskId, 
/**
 * The stage's result.
 */
result: Value, 
/**
 * How long the attempt took.
 */
duration_ms: number, 
/**
 * Retries it took.
 */
retry_count: number, } | { "type": "stage-failed", 
/**
 * The stage.
 */
stage: StageId, 
/**
 * The task.
 */
task: TaskId, 
/**
 * Error message.
 */
error: string, 
/**
 * Error class (exit-code, timeout, spawn, checkpoints...).
 */
error_type: ErrorType, 
/**
 * Retries so far, this failure included.
 */
retry_count: number, 
/**
 * How long the attempt took.
 */
duration_ms: number, } | { "type": "retry-scheduled", 
/**
 * The stage.
 */
stage: StageId, 
/**
 * The task.
 */
task: TaskId, 
/**
 * The attempt that will run.
 */
attempt: number, 
/**
 * Backoff delay.
 */
delay_ms: number, } | { "type": "circuit-opened", 
/**
 * The stage.
 */
stage: StageId, 
/**
 * Consecutive failures seen.
 */
failures: number, } | { "type": "circuit-closed", 
/**
 * The stage.
 */
stage: StageId, } | { "type": "strategy-set", 
/**
 * The stage.
 */
stage: StageId, 
/**
 * The new strategy.
 */
strategy: RetryStrategy, } | { "type": "pending-validation", 
/**
 * The task.
 */
task: TaskId, } | { "type": "eval-errored", 
/**
 * The task.
 */
task: TaskId, 
/**
 * Which evaluator.
 */
evaluator: string, 
/**
 * What was wrong.
 */
error: string, } | { "type": "run-resumed", 
/**
 * Why or by whom.
 */
reason: string, } | { "type": "replan-loop-detected", 
/**
 * Hash shared by the two plans.
 */
plan_hash: Hash, 
/**
 * 1-based number of the earlier revision with that hash.
 */
same_as_revision: number, 
/**
 * The reason the replanner gave this time.
 */
reason: string, } | { "type": "output-recorded", 
/**
 * The task.
 */
task: TaskId, 
/**
 * The attempt.
 */
attempt: number, 
/**
 * `agent`, `test` or `eval`, then `.stdout` or `.stderr`.
 */
stream: string, 
/**
 * The text, or its beginning when it is in the blob area.
 */
text: string, 
/**
 * The blob holding all of it, when it is large.
 */
blob: Hash | null, 
/**
 * Its full size.
 */
bytes: number, } | { "type": "attributed", 
/**
 * The authenticated name.
 */
principal: string, 
/**
 * How it was established: `token`, `unix-socket` or `os-user`.
 */
via: string, } | { "type": "tests-discovered", 
/**
 * The task.
 */
task: TaskId, 
/**
 * Which convention: `test_file`, `pytest tests/test_{id}.py`, `make test-{id}`,
 * `{id}_test.py` or `test_{id}.py`.
 */
convention: string, 
/**
 * The test command it gave the task.
 */
test: string, } | { "type": "sub-project-declared", 
/**
 * The task.
 */
task: TaskId, 
/**
 * The child workflow file, as the parent's workflow names it.
 */
workflow: string, } | { "type": "child-run-started", 
/**
 * The task.
 */
task: TaskId, 
/**
 * The child run.
 */
child_run: RunId, } | { "type": "parent-linked", 
/**
 * The parent run.
 */
parent_run: RunId, 
/**
 * The parent's task this run is the work of.
 */
task: TaskId, } | { "type": "child-run-ended", 
/**
 * The task.
 */
task: TaskId, 
/**
 * The child run.
 */
child_run: RunId, 
/**
 * Whether every task of the child is done.
 */
succeeded: boolean, 
/**
 * What failed or is blocked in the child (empty when it succeeded).
 */
failures: string, } | { "type": "worker-claimed", 
/**
 * The task.
 */
task: TaskId, 
/**
 * The attempt.
 */
attempt: number, 
/**
 * The worker.
 */
worker: string, 
/**
 * The worker has no worktree of the task's (its previous worker is gone): it starts in
 * a fresh one, with the recorded feedback.
 */
fresh_worktree: boolean, 
/**
 * The task's worker before, when another.
 */
previous: string | null, } | { "type": "attempt-abandoned", 
/**
 * The task.
 */
task: TaskId, 
/**
 * The attempt.
 */
attempt: number, 
/**
 * The worker that was lost.
 */
worker: string, 
/**
 * Why, in words.
 */
reason: string, } | { "type": "workspace-opened", 
/**
 * The repository (its top directory, or a shared repository's path or URL).
 */
repo: string, 
/**
 * The integration branch (`runlog/RUN`).
 */
branch: string, 
/**
 * The commit the run began from.
 */
base: string, } | { "type": "changes-recorded", 
/**
 * The task.
 */
task: TaskId, 
/**
 * The attempt.
 */
attempt: number, 
/**
 * The commit runlog made (the parent itself when the attempt changed nothing).
 */
commit: string, 
/**
 * The commit it was made on.
 */
parent: string, 
/**
 * The files changed.
 */
files: Array<string>, 
/**
 * Lines added.
 */
insertions: number, 
/**
 * Lines removed.
 */
deletions: number, 
/**
 * The patch: whole when small, else its beginning.
 */
patch: string, 
/**
 * The whole patch in the blob area, when larger than the event holds.
 */
blob: Hash | null, 
/**
 * The patch's size.
 */
patch_bytes: number, } | { "type": "task-merged", 
/**
 * The task.
 */
task: TaskId, 
/**
 * The merge commit, the integration branch's tip after it.
 */
commit: string, } | { "type": "merge-conflicted", 
/**
 * The task.
 */
task: TaskId, 
/**
 * The files in conflict.
 */
files: Array<string>, 
/**
 * The rescue it goes to (its number), or none: it waits for a person.
 */
rescue: number | null, } | { "type": "usage-recorded", 
/**
 * The record.
 */
usage: UsageRecord, } | { "type": "prices-set", 
/**
 * By model.
 */
prices: { [key in string]: Price }, } | { "type": "budget-set", 
/**
 * The task, or none for the run.
 */
task: TaskId | null, 
/**
 * The budget now.
 */
limits: Limits, 
/**
 * Who set it (`workflow` when the workflow did).
 */
by: string, } | { "type": "budget-spent", 
/**
 * The task.
 */
task: TaskId, 
/**
 * Whose budget: the task's own, or none for the run's.
 */
budget: TaskId | null, 
/**
 * Dollars or tokens.
 */
kind: BudgetKind, 
/**
 * The limit in force.
 */
limit: number, 
/**
 * What was spent.
 */
spent: number, } | { "type": "secrets-redacted", 
/**
 * The task whose record they were in, if any.
 */
task: TaskId | null, 
/**
 * What was replaced, by name.
 */
redactions: Array<Redaction>, } | { "type": "run-forgotten" } & Forgotten | { "type": "model-called" } & ModelCall | { "type": "usage-claimed", 
/**
 * The claim, as a usage record.
 */
usage: UsageRecord, } | { "type": "rerun-started" } & Rerun | { "type": "call-diverged" } & Divergence | { "type": "review-set", 
/**
 * The policy.
 */
policy: ReviewPolicy, } | { "type": "review-held", 
/**
 * The task.
 */
task: TaskId, 
/**
 * The score.
 */
score: number, 
/**
 * The threshold in force.
 */
threshold: number, 
/**
 * What the gate decided.
 */
outcome: GateOutcome, } | { "type": "evaluator-named", 
/**
 * The task.
 */
task: TaskId, 
/**
 * The model it asked, or empty.
 */
model: string, 
/**
 * Its own version (a prompt's, a rubric's), or empty.
 */
version: string, } | { "type": "answer-mapped" } & AnswerMapped | { "type": "wrote-outside" } & OutsideWrites | { "type": "experiment-defined" } & Experiment | { "type": "experiment-rerun" } & ExperimentRerun | { "type": "experiment-budget-set", 
/**
 * The most its live calls may cost now, in USD.
 */
max_cost_usd: number | null, } | { "type": "model-call-reserved" } & Reservation | { "type": "model-call-did-not-fit" } & DidNotFit | { "type": "alert-sent" } & AlertSent | { "type": "command-keyed", 
/**
 * The sender's key.
 */
key: string, 
/**
 * blake3 of the command as decided (its JSON), to tell the same command from another.
 */
command: Hash, 
/**
 * How many events before this one the command recorded.
 */
events: number, };

/**
 * One page of a run's events, each with its words, and where the next page starts.
 */
export type EventsPage = { 
/**
 * The run.
 */
run: string, 
/**
 * Its head seq.
 */
head: number, 
/**
 * The page's events, in order.
 */
events: Array<Worded>, 
/**
 * The seq the next page starts at, when there is more.
 */
next: number | null, };

/**
 * A run this server now executes (a start, a rerun), or one it is stopping.
 */
export type Executing = { 
/**
 * The run.
 */
run: string, 
/**
 * The run it reruns, for a rerun.
 */
from_run: string | null, 
/**
 * True: the server executes it.
 */
executing: boolean, };

/**
 * One execution in a cell.
 */
export type Execution = { 
/**
 * The rerun, or none for the recording.
 */
rerun: RunId | null, 
/**
 * What it did, once ended.
 */
outcome: Outcome | null, };

/**
 * An experiment as defined (the `experiment-defined` event's record, first in its register).
 */
export type Experiment = { 
/**
 * Its name.
 */
name: string, 
/**
 * The recorded runs it executes again, each pinned at its head then.
 */
suite: Array<SuiteRun>, 
/**
 * The variants, in the order given (`base` is not among them).
 */
variants: Array<Variant>, 
/**
 * How many times each variant runs each suite run; above 1, `base` also runs live.
 */
repeat: number, 
/**
 * Where the reruns' calls are answered from.
 */
answers: Answers, 
/**
 * The most its live calls may cost, in USD (raised by `experiment resume`).
 */
max_cost_usd: number | null, 
/**
 * Suite runs a variant cannot be applied to, with why: counted in the report.
 */
skipped: Array<Skipped>, 
/**
 * The bootstrap's seed: the report's intervals are the same every time it is made.
 */
seed: number, };

/**
 * One rerun of an experiment (the `experiment-rerun` event's record): in the register when it
 * is started, and in the rerun itself, third, as its lineage.
 */
export type ExperimentRerun = { 
/**
 * The experiment.
 */
experiment: string, 
/**
 * The suite run executed again.
 */
run: RunId, 
/**
 * The variant.
 */
variant: string, 
/**
 * Which repeat, from 1.
 */
repeat: number, 
/**
 * The rerun.
 */
rerun: RunId, 
/**
 * The model map its gateway applies.
 */
models: Array<[string, string]>, };

/**
 * One experiment in the list.
 */
export type ExperimentRow = { 
/**
 * Its name.
 */
name: string, 
/**
 * When it was defined.
 */
defined_ms: number, 
/**
 * Suite runs.
 */
runs: number, 
/**
 * Its variants' names.
 */
variants: Array<string>, 
/**
 * How far it has gone.
 */
progress: Progress, };

/**
 * An experiment's report.
 */
export type ExperimentView = { 
/**
 * Its name.
 */
name: string, 
/**
 * When it was defined (ms since the epoch).
 */
defined_ms: number, 
/**
 * The suite, each run as pinned and whether it is still in the store.
 */
suite: Array<SuiteStatus>, 
/**
 * The variants (`base` first: the recording).
 */
variants: Array<VariantInfo>, 
/**
 * Repeats.
 */
repeat: number, 
/**
 * Where the reruns' answers come from.
 */
answers: Answers, 
/**
 * The budget for live calls, in USD.
 */
max_cost_usd: number | null, 
/**
 * How far it has gone.
 */
progress: Progress, 
/**
 * Runs a variant was not applied to, with why.
 */
skipped: Array<Skipped>, 
/**
 * The figures.
 */
figures: Figures, };

/**
 * The report.
 */
export type Figures = { 
/**
 * Each variant, `base` first.
 */
variants: Array<VariantFigures>, 
/**
 * Each task of the suite, by run.
 */
tasks: Array<TaskRow>, };

/**
 * A decision another threshold or weighting would have changed.
 */
export type Flip = { 
/**
 * The verdict.
 */
verdict: VerdictRef, 
/**
 * The score the what-if read.
 */
score: number, 
/**
 * It would pass now (it did not), or not (it did).
 */
now_passes: boolean, 
/**
 * What became of the work.
 */
afterwards: string, 
/**
 * What happened afterwards (a person, or a contradiction) sides with the new decision:
 * `true`; with the old one: `false`; nothing says: none.
 */
borne_out: boolean | null, };

/**
 * A task whose outcome flipped.
 */
export type FlippedTask = { 
/**
 * The suite run.
 */
run: RunId, 
/**
 * The task.
 */
task: TaskId, 
/**
 * The rerun that shows it (the first of the variant's).
 */
rerun: RunId | null, };

/**
 * What a run's tombstone keeps.
 */
export type Forgotten = { 
/**
 * The run.
 */
run: RunId, 
/**
 * Its chain's first hash (from its id).
 */
genesis: Hash, 
/**
 * Its last seq.
 */
head_seq: number, 
/**
 * Its chain hash at that seq: with `head_seq`, its digest.
 */
head_hash: Hash, 
/**
 * How it stood: `succeeded`, `failed`, `interrupted`...
 */
outcome: string, 
/**
 * Who forgot it (the authenticated name).
 */
principal: string, 
/**
 * How that was established: `token`, `unix-socket` or `os-user`.
 */
via: string, 
/**
 * Why, as given (`--reason`, or the retention that applied).
 */
reason: string, };

/**
 * A fork's origin.
 */
export type ForkOrigin = { 
/**
 * Parent run.
 */
from_run: RunId, 
/**
 * Parent seq.
 */
at_seq: number, 
/**
 * Parent chain hash at that seq.
 */
from_hash: Hash, };

/**
 * A fork recorded: the new run, the run and seq it started from, and its head (`fork --json`,
 * the API's answer to a fork).
 */
export type Forked = { 
/**
 * The new run.
 */
run: string, 
/**
 * The run it was forked from.
 */
from_run: string, 
/**
 * The seq of the run it was forked from.
 */
at_seq: number, 
/**
 * The new run's head.
 */
seq: number, };

/**
 * The first damage in a run.
 */
export type Found = { 
/**
 * What kind of damage.
 */
kind: string, 
/**
 * What is wrong, in words.
 */
reason: string, 
/**
 * Where.
 */
seq: number, };

/**
 * What the eval gate decided for one score.
 */
export type GateOutcome = "pass" | { "rescue": { 
/**
 * 1-based rescue number.
 */
n: number, } } | "fail";

/**
 * A 32-byte blake3 digest (plan hashes, log chain heads, blob references).
 */
export type Hash = string;

/**
 * A run this server is interrupting.
 */
export type Interrupting = { 
/**
 * The run.
 */
run: string, 
/**
 * True: its commands are being stopped.
 */
interrupting: boolean, };

/**
 * The changes an evaluator judged: the commit and its counts (`runlog show RUN TASK --diff
 * --attempt N` prints the patch).
 */
export type Judged = { 
/**
 * The attempt whose changes they are.
 */
attempt: number, 
/**
 * The commit.
 */
commit: string, 
/**
 * The files changed.
 */
files: Array<string>, 
/**
 * Lines added.
 */
insertions: number, 
/**
 * Lines removed.
 */
deletions: number, };

/**
 * Every evaluator's report.
 */
export type JudgesReport = { 
/**
 * Runs read.
 */
runs: number, 
/**
 * Verdicts taken.
 */
verdicts: number, 
/**
 * The what-if asked for.
 */
what_if?: WhatIf, 
/**
 * By evaluator, by their command.
 */
evaluators: Array<EvaluatorReport>, };

/**
 * A budget's bounds; `None` is no bound.
 */
export type Limits = { 
/**
 * USD, reported or priced (unpriced usage cannot count).
 */
max_cost_usd: number | null, 
/**
 * Input and output tokens.
 */
max_tokens: number | null, };

/**
 * A task's edges of the task graph.
 */
export type Link = { 
/**
 * The task.
 */
id: TaskId, 
/**
 * What it waits for, as its plan names it.
 */
after: Array<TaskId>, 
/**
 * The tasks that replaced it.
 */
replaced_by: Array<TaskId>, };

/**
 * One place of the recording mapped to the rerun's, and how often an answer named it.
 */
export type Mapped = { 
/**
 * As the recording had it.
 */
was: string, 
/**
 * As the rerun has it.
 */
now: string, 
/**
 * How many times the answer named it.
 */
count: number, };

/**
 * Something that happened at a moment (a model call: over its duration, ending then).
 */
export type Mark = { 
/**
 * The event's kind (`model-called`, `task-approved`, `rolled-back`...).
 */
kind: string, 
/**
 * Its seq.
 */
seq: number, 
/**
 * When it was recorded.
 */
at: Timestamp, 
/**
 * How long it took, when it took time (a model call).
 */
duration_ms: number | null, 
/**
 * What it was, in a few words.
 */
label: string, };

/**
 * A task's merge that conflicted.
 */
export type MergeConflict = { 
/**
 * The seq of the conflict.
 */
seq: number, 
/**
 * The task.
 */
task: TaskId, 
/**
 * The files in conflict.
 */
files: Array<string>, 
/**
 * The rescue that was to resolve it; none: a person.
 */
rescue: number | null, };

/**
 * The provider API a call spoke.
 */
export type ModelApi = "messages" | "count-tokens" | "chat-completions" | "responses" | "models";

/**
 * One model call (the `model-called` event's record).
 */
export type ModelCall = { 
/**
 * The task whose command made it (for the replanner, the task whose completion asked
 * for it).
 */
task: TaskId, 
/**
 * The attempt.
 */
attempt: number, 
/**
 * Which of the attempt's commands.
 */
stage: UsageStage, 
/**
 * Its number among that command's calls, from 1.
 */
n: number, 
/**
 * The provider, as the workflow names it (`anthropic`, `openai`, or a `[providers]`
 * table's name).
 */
provider: string, 
/**
 * The API it spoke.
 */
api: ModelApi, 
/**
 * The model: the one that answered, else the one asked for.
 */
model: string | null, 
/**
 * Whether the answer was streamed (server-sent events).
 */
streamed: boolean, 
/**
 * The HTTP status the command was given (0 when none was).
 */
status: number, 
/**
 * How it ended.
 */
end: CallEnd, 
/**
 * Milliseconds from the request to the provider's first byte, when one came.
 */
first_byte_ms: number | null, 
/**
 * Milliseconds from the request to the answer's last byte (or the end).
 */
duration_ms: number, 
/**
 * The usage the provider returned.
 */
tokens: Tokens, 
/**
 * The cost in USD: the provider's, or priced with the run's prices, or unknown.
 */
cost_usd: number | null, 
/**
 * Where the cost comes from.
 */
cost: CostSource, 
/**
 * The request as sent (secrets replaced).
 */
request: Body | null, 
/**
 * The answer as it came: for a stream, its events as they passed.
 */
response: Body | null, 
/**
 * For a stream, the message its events put together.
 */
assembled: Body | null, 
/**
 * What went wrong, when something did.
 */
error: string | null, };

/**
 * A decision a person or an evaluator error made outside the gate, or secrets kept out of
 * the record.
 */
export type OutOfGate = { "kind": "approved", 
/**
 * Seq.
 */
seq: number, 
/**
 * Task.
 */
task: TaskId, 
/**
 * Who, as claimed.
 */
by: string, 
/**
 * Dependents that became ready.
 */
ready: Array<TaskId>, 
/**
 * Who, as the recording process established it (logs before it was recorded: none).
 */
principal?: Recorder, 
/**
 * The claim names someone else than the principal.
 */
claim_differs?: boolean, } | { "kind": "rejected", 
/**
 * Seq.
 */
seq: number, 
/**
 * Task.
 */
task: TaskId, 
/**
 * Who, as claimed.
 */
by: string, 
/**
 * Reopened instead of failed.
 */
reopen: boolean, 
/**
 * Why.
 */
reason: string, 
/**
 * Who, as the recording process established it (logs before it was recorded: none).
 */
principal?: Recorder, 
/**
 * The claim names someone else than the principal.
 */
claim_differs?: boolean, } | { "kind": "eval-error", 
/**
 * Seq.
 */
seq: number, 
/**
 * Task.
 */
task: TaskId, 
/**
 * Evaluator.
 */
evaluator: string, 
/**
 * What was wrong.
 */
error: string, } | { "kind": "secrets-redacted", 
/**
 * Seq.
 */
seq: number, 
/**
 * The task whose record held them, if any.
 */
task: TaskId | null, 
/**
 * By name, how many.
 */
redactions: Array<Redaction>, };

/**
 * What one task did in one execution (the recording, or a rerun).
 */
export type Outcome = { 
/**
 * It ended done.
 */
done: boolean, 
/**
 * Whether its last tests passed (none when it has none or they did not run).
 */
tests: boolean | null, 
/**
 * Whether the gate passed its last score (none when it is not judged or was not).
 */
judged: boolean | null, 
/**
 * Its last score.
 */
score: number | null, 
/**
 * What its calls cost, answered live or from the recording (as the recording priced them).
 */
cost_usd: number, 
/**
 * The part of `cost_usd` answered from the recording, paid once in the recorded run.
 */
saved_usd: number, 
/**
 * Tokens its calls used (recorded answers count the recording's).
 */
tokens: number, 
/**
 * Calls its commands made.
 */
calls: number, 
/**
 * Of those, answered from the recording.
 */
recorded_calls: number, 
/**
 * From its first attempt's start to its end, in milliseconds.
 */
wall_ms: number, };

/**
 * Where a call's bound on its output comes from.
 */
export type OutputBound = "request" | "model" | "workflow";

/**
 * What a write outside the worktree does to its attempt (`[settings] outside_writes`).
 */
export type OutsidePolicy = "warn" | "fail";

/**
 * What an attempt wrote outside its worktree (the `wrote-outside` event's record).
 */
export type OutsideWrites = { 
/**
 * The task.
 */
task: TaskId, 
/**
 * Its attempt.
 */
attempt: number, 
/**
 * Each place, with what changed there.
 */
written: Array<Written>, 
/**
 * The policy in force: whether the attempt fails for it.
 */
policy: OutsidePolicy, };

/**
 * The task of another run this run is the sub-project of.
 */
export type ParentLink = { 
/**
 * The parent run.
 */
run: RunId, 
/**
 * The parent's task.
 */
task: TaskId, };

/**
 * One part of a turn, uncut.
 */
export type Part = { "part": "text", 
/**
 * The text.
 */
text: string, } | { "part": "reminder", 
/**
 * The text, tags and all.
 */
text: string, } | { "part": "tool-call", 
/**
 * The call's id, which its result names.
 */
id: string | null, 
/**
 * The tool.
 */
name: string, 
/**
 * Its arguments, JSON as text.
 */
arguments: string, } | { "part": "tool-result", 
/**
 * The id of the call it answers.
 */
id: string | null, 
/**
 * Its text.
 */
text: string, 
/**
 * Whether the tool said it failed.
 */
error: boolean, } | { "part": "thinking", 
/**
 * What it shows of it.
 */
text: string, } | { "part": "other", 
/**
 * The block's type.
 */
of: string, };

/**
 * A place outside a task's worktree that runlog watches.
 */
export type Place = { "place": "checkout" } | { "place": "other-run", 
/**
 * That run.
 */
run: RunId, };

/**
 * Which sides a task is on.
 */
export type Presence = "both" | "left-only" | "right-only";

/**
 * A model's prices in USD per million tokens (`[prices."MODEL"]` in a workflow).
 */
export type Price = { 
/**
 * Per million input tokens not read from or written to a cache.
 */
input: number, 
/**
 * Per million output tokens.
 */
output: number, 
/**
 * Per million tokens read from a cache; the input price when not given.
 */
cache_read: number | null, 
/**
 * Per million tokens written to a cache; the input price when not given.
 */
cache_write: number | null, };

/**
 * Reruns done of all.
 */
export type Progress = { 
/**
 * Reruns planned (of the suite runs still in the store).
 */
total: number, 
/**
 * Ended.
 */
ended: number, 
/**
 * Started and not ended.
 */
started: number, 
/**
 * What the live calls cost, in USD.
 */
live_usd: number, 
/**
 * What the calls answered from the recording had cost, in USD.
 */
saved_usd: number, };

/**
 * How often what happened afterwards contradicted one kind of decision.
 */
export type Rate = { 
/**
 * Decisions of the kind.
 */
of: number, 
/**
 * Contradicted.
 */
contradicted: number, 
/**
 * The share contradicted.
 */
rate: number | null, 
/**
 * The contradicted verdicts, with what contradicted each.
 */
verdicts: Array<VerdictRef>, };

/**
 * Whether an open task may start.
 */
export type Readiness = { "readiness": "ready" } | { "readiness": "waiting", 
/**
 * Those dependencies.
 */
on: Array<TaskId>, } | { "readiness": "blocked", 
/**
 * Those dependencies.
 */
by: Array<TaskId>, } | { "readiness": "circuit-open", 
/**
 * The stage.
 */
stage: StageId, } | { "readiness": "budget-spent", 
/**
 * Which budget, its limit and the spend, in words.
 */
spent: string, };

/**
 * The events a command recorded, with their words, and the run's head after them.
 */
export type Recorded = { 
/**
 * The run.
 */
run: string, 
/**
 * Its head seq after the command.
 */
head: number, 
/**
 * The events it recorded.
 */
events: Array<Worded>, 
/**
 * The command had been sent before with its idempotency key: these are the events it
 * recorded then, and nothing was recorded now.
 */
replayed: boolean, };

/**
 * Who recorded a decision, as its `attributed` event says (any log's words, so a string).
 */
export type Recorder = { 
/**
 * The name: a token's, a user's, an agent's.
 */
name: string, 
/**
 * How the recording process knew them (`token`, `os-user`...).
 */
via: string, };

/**
 * How many of one secret were replaced.
 */
export type Redaction = { 
/**
 * The secret's name: an environment variable's, a `redact_file` entry's, or a key shape
 * (`openai-key`, `anthropic-key`, `aws-access-key`, `github-token`, `private-key`).
 */
name: string, 
/**
 * How many times it was replaced.
 */
count: number, };

/**
 * A new task standing in for a cancelled one; dependents of `old` wait on `new` instead.
 */
export type Replacement = { 
/**
 * The superseded task.
 */
old: TaskId, 
/**
 * The task that replaces it.
 */
new: TaskId, };

/**
 * A rerun (the `rerun-started` event's record), recorded right after its fork.
 */
export type Rerun = { 
/**
 * The recorded run whose calls answer this one's.
 */
from_run: RunId, 
/**
 * The seq of that run it re-executes from.
 */
from_seq: number, 
/**
 * Where answers come from.
 */
answers: Answers, 
/**
 * Tasks run again from `from_seq` though the fork holds them further on (`--task`, or
 * running at `from_seq`).
 */
tasks: Array<RerunTask>, 
/**
 * Tasks whose spec a workflow file given to the rerun changes (same ids, same order of
 * work): their commands, tests and evaluators from then on.
 */
specs: Array<TaskSpec>, };

/**
 * A rerun's calls, beside a diff of it and the run it reruns.
 */
export type RerunCalls = { 
/**
 * The rerun.
 */
run: string, 
/**
 * How its calls were answered.
 */
calls: Answered, 
/**
 * The same in words.
 */
said: string, };

/**
 * A task the rerun runs again from where it stood at the rerun's point, though the run it
 * was forked from went on past it.
 */
export type RerunTask = { 
/**
 * The task.
 */
task: TaskId, 
/**
 * The commit its code starts from (in a git workspace).
 */
commit: string | null, 
/**
 * How many attempts the rerun's numbering is ahead of the recording's: its next attempt
 * is answered by the recorded attempt that many below it.
 */
attempts_ahead: number, };

/**
 * The worst case of one call, held while it is in flight (the `model-call-reserved` event).
 */
export type Reservation = { 
/**
 * The task whose command makes the call.
 */
task: TaskId, 
/**
 * Its attempt.
 */
attempt: number, 
/**
 * Which of the attempt's commands.
 */
stage: UsageStage, 
/**
 * The call's number among the command's calls (its `model-called` has the same).
 */
n: number, 
/**
 * The provider it goes to.
 */
provider: string, 
/**
 * The API it speaks.
 */
api: ModelApi, 
/**
 * The model asked.
 */
model: string | null, 
/**
 * Input tokens at most: the request's size in bytes (a token is at least a byte) and
 * what the provider adds.
 */
input_tokens: number, 
/**
 * Output tokens at most.
 */
output_tokens: number, 
/**
 * Where the output bound comes from.
 */
bound: OutputBound, 
/**
 * The worst case in USD at the run's price for the model; none when the model has no
 * price (then only a token budget holds it, as only tokens of its usage can count).
 */
cost_usd: number | null, };

/**
 * The same work judged more than once.
 */
export type Retest = { 
/**
 * Works judged more than once.
 */
works: number, 
/**
 * The verdicts on them.
 */
judgements: number, 
/**
 * The mean of each work's score spread (highest less lowest).
 */
mean_spread: number | null, 
/**
 * The largest spread.
 */
max_spread: number, 
/**
 * Works whose decision was not always the same.
 */
flipped: number, 
/**
 * Those works' verdicts.
 */
flips: Array<Array<VerdictRef>>, };

/**
 * How many times a failing stage is retried.
 */
export type RetryLimit = { "max": number } | "unlimited";

/**
 * The supervisor's recovery strategy, per task (or per stage with `StrategySet`).
 */
export type RetryStrategy = { 
/**
 * How many retries.
 */
limit: RetryLimit, 
/**
 * Bounds for `Unlimited` (also applied to `Max` when set).
 */
budget: Budget, 
/**
 * Delay before the first retry.
 */
delay_ms: number, 
/**
 * Each further retry waits this many times longer.
 */
backoff: number, 
/**
 * Per-attempt timeout; the runner kills the attempt's process group when it passes.
 */
timeout_ms: number | null, 
/**
 * Consecutive failures of a stage that open its circuit; 0 never opens it.
 */
circuit_after: number, };

/**
 * Which verdicts a person reviews whatever the score.
 */
export type ReviewMode = "none" | "failing" | "all";

/**
 * The run's review policy, recorded as it starts (`review-set`).
 */
export type ReviewPolicy = { 
/**
 * The verdicts always reviewed.
 */
mode: ReviewMode, 
/**
 * The share of the other verdicts reviewed as well, in [0, 1], chosen by a hash of the
 * run, the task and the attempt: the same verdicts whenever the run is replayed.
 */
sample: number, };

/**
 * One run as `runs` lists it (and the API's `GET /v1/runs`).
 */
export type Row = { 
/**
 * The run.
 */
run: string, 
/**
 * Its status word, or `damaged`.
 */
status: string, 
/**
 * How it finished, once it has.
 */
outcome: RunOutcome | null, 
/**
 * Events recorded.
 */
events: number, 
/**
 * When it started.
 */
started_ms: number | null, 
/**
 * When its latest event happened (with `started_ms`, how long it has run).
 */
last_ms: number | null, 
/**
 * The run it was forked from.
 */
fork_of: string | null, 
/**
 * The seq of that run it was forked at.
 */
fork_at: number | null, 
/**
 * The workflow file it was started from.
 */
workflow: string | null, 
/**
 * For a sub-project's child run: `RUN/TASK` of its parent.
 */
sub_project_of: string | null, };

/**
 * A run: one execution of a workflow, one stream of events.
 */
export type RunId = string;

/**
 * How a finished run ended.
 */
export type RunOutcome = "succeeded" | { "failed": { 
/**
 * Tasks that failed.
 */
failed: Array<TaskId>, 
/**
 * Open tasks that can never become ready.
 */
blocked: Array<TaskId>, } } | { "paused": { 
/**
 * Why, and what would unblock it.
 */
reason: string, } };

/**
 * Counts over a run's history plus its current standing.
 */
export type RunSummary = { 
/**
 * Run id.
 */
run: RunId | null, 
/**
 * Workflow name.
 */
workflow: string | null, 
/**
 * `not-started`, `running`, `interrupted` or `finished`.
 */
status: string, 
/**
 * The outcome, once finished.
 */
outcome: RunOutcome | null, 
/**
 * Fork origin.
 */
fork: ForkOrigin | null, 
/**
 * Time of the first event.
 */
started_at: Timestamp | null, 
/**
 * Time of the last event.
 */
last_at: Timestamp | null, 
/**
 * Events in the history.
 */
events: number, 
/**
 * Tasks by status name (current state).
 */
tasks: { [key in string]: number }, 
/**
 * Attempts started.
 */
attempts: number, 
/**
 * Eval rescues.
 */
rescues: number, 
/**
 * Test failures that led to a retry or failure.
 */
test_failures: number, 
/**
 * Stage failures.
 */
stage_failures: number, 
/**
 * Evals scored.
 */
evals: number, 
/**
 * Evaluator errors.
 */
eval_errors: number, 
/**
 * Replans requested.
 */
replans_requested: number, 
/**
 * Plans revised.
 */
replans: number, 
/**
 * Regeneration loops detected.
 */
replan_loops: number, 
/**
 * Circuits opened.
 */
circuits_opened: number, 
/**
 * Rollbacks.
 */
rollbacks: number, 
/**
 * Interruptions.
 */
interruptions: number, 
/**
 * Messages.
 */
messages: number, 
/**
 * In a git workspace: each merge into the integration branch that conflicted, in order.
 */
merge_conflicts?: Array<MergeConflict>, };

/**
 * Settings in force for a run. Recorded in `RunStarted`, so an audit reads the values that
 * decided, not today's config.
 */
export type Settings = { 
/**
 * A score at or above this passes the eval gate.
 */
eval_threshold: number, 
/**
 * Below-threshold scores rescue the task (same agent, same worktree) instead of failing it.
 */
auto_rescue: boolean, 
/**
 * Rescues allowed per task before a failing score fails it.
 */
max_eval_rescues: number, 
/**
 * Test failures retried per task before it fails.
 */
max_test_retries: number, 
/**
 * Deepest allowed nesting of tasks under parents (a top-level task has depth 1).
 */
max_depth: number, 
/**
 * How many tasks may run at once.
 */
jobs: number, 
/**
 * Past this many events the run's history is reported as growing large.
 */
history_warn_events: number, };

/**
 * A share with its 95% interval.
 */
export type Share = { 
/**
 * Successes.
 */
k: number, 
/**
 * Trials.
 */
n: number, 
/**
 * k / n (0 when n is 0).
 */
share: number, 
/**
 * The interval's low end.
 */
low: number, 
/**
 * Its high end.
 */
high: number, };

/**
 * A suite run a variant is not applied to.
 */
export type Skipped = { 
/**
 * The run.
 */
run: RunId, 
/**
 * The variant.
 */
variant: string, 
/**
 * Why, in words.
 */
reason: string, };

/**
 * What a budget's scope has spent.
 */
export type Spend = { 
/**
 * Tokens used.
 */
tokens: Tokens, 
/**
 * USD, reported or priced.
 */
cost_usd: number, 
/**
 * Usage records whose cost is unknown (their tokens count, their dollars cannot).
 */
unpriced: number, };

/**
 * One entry of the stack.
 */
export type StackEntry = { 
/**
 * Seq of the event that pushed it.
 */
seq: number, 
/**
 * Completed or failed.
 */
state: StackState, 
/**
 * The stage.
 */
stage: StageId, 
/**
 * The task.
 */
task: TaskId, 
/**
 * The result (completed entries).
 */
result: Value | null, 
/**
 * The error and its type (failed entries).
 */
error: [string, string] | null, 
/**
 * Duration of the attempt.
 */
duration_ms: number, 
/**
 * Retries so far.
 */
retry_count: number, 
/**
 * When.
 */
at: Timestamp, };

/**
 * What a stack entry records.
 */
export type StackState = "stage-completed" | "stage-failed";

/**
 * The stack, newest first, and the latest result per stage.
 */
export type StackView = { 
/**
 * The run.
 */
run: string, 
/**
 * The seq it stands at.
 */
seq: number, 
/**
 * Its entries, newest first.
 */
stack: Array<StackEntry>, 
/**
 * Each stage's latest result.
 */
latest_results: Record<string, unknown>, };

/**
 * A stage whose latest result differs.
 */
export type StageDiff = { 
/**
 * The stage.
 */
stage: string, 
/**
 * Left result.
 */
left: Value | null, 
/**
 * Right result.
 */
right: Value | null, };

/**
 * Health of one stage.
 */
export type StageHealthRow = { 
/**
 * The stage.
 */
stage: StageId, 
/**
 * Attempts started.
 */
executions: number, 
/**
 * Attempts completed.
 */
completions: number, 
/**
 * Attempts failed.
 */
failures: number, 
/**
 * Total duration of finished attempts.
 */
total_duration_ms: number, 
/**
 * Failures since the last success.
 */
consecutive_failures: number, 
/**
 * Circuit breaker.
 */
circuit: Circuit, 
/**
 * Whether a strategy was set for the stage at run time.
 */
strategy_overridden: boolean, };

/**
 * A supervisor stage; tasks default to a stage named after themselves.
 */
export type StageId = string;

/**
 * One row per stage that has run, at a seq.
 */
export type StagesView = { 
/**
 * The run.
 */
run: string, 
/**
 * The seq the rows stand at.
 */
seq: number, 
/**
 * The stages, by name.
 */
stages: Array<StageHealthRow>, };

/**
 * A recorded run of the suite.
 */
export type SuiteRun = { 
/**
 * The run.
 */
run: RunId, 
/**
 * Its head when the experiment was defined: what `base` is.
 */
head_seq: number, 
/**
 * Its chain hash at that seq, hex.
 */
head_hash: string, 
/**
 * The tasks executed again (empty: all of them).
 */
tasks: Array<TaskId>, };

/**
 * A suite run in the report.
 */
export type SuiteStatus = { 
/**
 * The run.
 */
run: string, 
/**
 * Its head when pinned.
 */
head_seq: number, 
/**
 * Its chain hash then.
 */
head_hash: string, 
/**
 * The tasks executed again (empty: all).
 */
tasks: Array<string>, 
/**
 * The run was forgotten (or removed) since: its base figures are missing.
 */
gone: boolean, };

/**
 * The classification of a refactoring task, recorded as an event.
 */
export type TaskClass = "merge" | "move" | "refactor" | "integrate" | "implement" | "new-code" | "analyze-more";

/**
 * How one task differs.
 */
export type TaskDiff = { 
/**
 * The task.
 */
task: string, 
/**
 * Present only on the right (added, e.g. by a replan), only on the left, or both.
 */
presence: Presence, 
/**
 * Status left → right, when it changed.
 */
status: [TaskStatus | null, TaskStatus | null] | null, 
/**
 * Attempts left → right, when they changed.
 */
attempts: [number, number] | null, 
/**
 * Rescues left → right, when they changed.
 */
rescues: [number, number] | null, 
/**
 * Test failures left → right, when they changed.
 */
test_failures: [number, number] | null, 
/**
 * Eval score left → right, when it changed.
 */
score: [number | null, number | null] | null, 
/**
 * Per-dimension score deltas (right − left; a side without it counts as absent).
 */
dimensions: { [key in string]: DimensionDelta }, 
/**
 * Tasks replacing it on the right that did not on the left.
 */
replaced_by: Array<string>, };

/**
 * A task, stable across replans, rollbacks and forks (diffs match tasks by it).
 */
export type TaskId = string;

/**
 * A task of the suite and what each variant made of it.
 */
export type TaskRow = { 
/**
 * The suite run.
 */
run: RunId, 
/**
 * The task.
 */
task: TaskId, 
/**
 * One cell per variant, in the report's order.
 */
cells: Array<Cell>, };

/**
 * A task as planned. Immutable once recorded in `TaskAdded` or `PlanRevised`.
 */
export type TaskSpec = { 
/**
 * Stable id.
 */
id: TaskId, 
/**
 * What to do; also searched for file paths and destructive verbs (re-evaluation after a destructive task).
 */
description: string, 
/**
 * Tasks that must be done first.
 */
after: Array<TaskId>, 
/**
 * The group this task belongs to; a task with children is a group whose status follows them.
 */
parent: TaskId | null, 
/**
 * Files the task touches, beside those named in the description.
 */
files: Array<string>, 
/**
 * `Some(true)`/`Some(false)` says whether it is destructive; `None` guesses from the description.
 */
destructive: boolean | null, 
/**
 * The agent command.
 */
run: string | null, 
/**
 * The test command; with `requires_testing`, submit leads to testing.
 */
test: string | null, 
/**
 * The evaluator command; when set, passing tests lead to pending-eval, not done.
 */
eval: string | null, 
/**
 * `false` skips testing even when a test command is set (planning and docs tasks).
 */
requires_testing: boolean, 
/**
 * Supervisor stage; defaults to the task id.
 */
stage: StageId | null, 
/**
 * Retry strategy for stage failures (agent exited non-zero or timed out).
 */
retry: RetryStrategy, 
/**
 * Checkpoints the agent must reach before the task may resolve (exhaustive analysis).
 */
checkpoints: Array<string>, };

/**
 * A task's status. `blocked` is not a status: it is derived readiness of an open task.
 */
export type TaskStatus = "open" | "in-progress" | "testing" | "test-failed" | "pending-eval" | "done" | "failed" | "cancelled";

/**
 * A run over time.
 */
export type Timeline = { 
/**
 * Its first event's time.
 */
start: Timestamp, 
/**
 * Its last event's time.
 */
end: Timestamp, 
/**
 * Its last seq.
 */
head: number, 
/**
 * A row per task, in the order they joined the plan.
 */
rows: Array<TimelineRow>, 
/**
 * What happened to the whole run: rollbacks, stops, resumes, its end.
 */
marks: Array<Mark>, };

/**
 * A task's row.
 */
export type TimelineRow = { 
/**
 * The task.
 */
task: TaskId, 
/**
 * Its bars, in the order they began.
 */
bars: Array<Bar>, 
/**
 * Its marks, in seq order.
 */
marks: Array<Mark>, };

/**
 * Milliseconds since the Unix epoch. Time only enters the core inside commands and events.
 */
export type Timestamp = number;

/**
 * Token counts, normalised.
 */
export type Tokens = { 
/**
 * Input tokens, cached ones included.
 */
input: number, 
/**
 * Output tokens, reasoning included.
 */
output: number, 
/**
 * Of the input, read from a cache.
 */
cache_read: number, 
/**
 * Of the input, written to a cache.
 */
cache_write: number, 
/**
 * Of the output, spent reasoning.
 */
reasoning: number, };

/**
 * One tombstone in the register.
 */
export type Tombstone = { 
/**
 * The run forgotten.
 */
run: string, 
/**
 * Its last seq.
 */
head_seq: number, 
/**
 * Its chain hash there (hex).
 */
head_hash: string, 
/**
 * How it stood.
 */
outcome: string, 
/**
 * Who forgot it.
 */
by: string, 
/**
 * When (ms since the epoch).
 */
at_ms: number, 
/**
 * Why.
 */
reason: string, 
/**
 * The tombstone's own seq in the register.
 */
seq: number, };

/**
 * What a variant's executions used.
 */
export type Totals = { 
/**
 * USD in all, answered live or from the recording.
 */
cost_usd: number, 
/**
 * Per execution.
 */
cost_usd_mean: number, 
/**
 * USD of calls answered from the recording (not paid again).
 */
saved_usd: number, 
/**
 * USD of calls that went live.
 */
live_usd: number, 
/**
 * Tokens in all.
 */
tokens: number, 
/**
 * Per execution.
 */
tokens_mean: number, 
/**
 * Calls in all.
 */
calls: number, 
/**
 * Of those, answered from the recording.
 */
recorded_calls: number, 
/**
 * Milliseconds in all (tasks' own time, summed).
 */
wall_ms: number, 
/**
 * Per execution.
 */
wall_ms_mean: number, };

/**
 * One turn: who spoke (`system`, `user`, `assistant`, `tool`) and what they said.
 */
export type Turn = { 
/**
 * The role.
 */
role: string, 
/**
 * What was said, in order.
 */
parts: Array<Part>, };

/**
 * One usage record as the state keeps it (the `usage-recorded` event's fields).
 */
export type UsageRecord = { 
/**
 * The task.
 */
task: TaskId, 
/**
 * The attempt.
 */
attempt: number, 
/**
 * Which command.
 */
stage: UsageStage, 
/**
 * The model, when reported.
 */
model: string | null, 
/**
 * The provider, when known.
 */
provider: string | null, 
/**
 * The tokens.
 */
tokens: Tokens, 
/**
 * The cost, when known.
 */
cost_usd: number | null, 
/**
 * Where the cost comes from.
 */
cost: CostSource, 
/**
 * How many reports were added up into it.
 */
reports: number, };

/**
 * Which of an attempt's commands used the tokens.
 */
export type UsageStage = "agent" | "tests" | "evaluator" | "replanner";

/**
 * A JSON-like value, encodable with bincode.
 */
export type Value = null | boolean | number | number | string | Array<Value> | { [key in string]: Value };

/**
 * A variant: an overlay on each recorded run's workflow.
 */
export type Variant = { 
/**
 * Its name.
 */
name: string, 
/**
 * The file it was read from, as given.
 */
file: string, 
/**
 * The file's text, kept whole: each rerun applies it to its run's tasks.
 */
text: string, 
/**
 * Its model map: a call asking the first model is answered by the second.
 */
models: Array<[string, string]>, };

/**
 * One variant's figures.
 */
export type VariantFigures = { 
/**
 * The variant.
 */
name: string, 
/**
 * Executions of a task that ended (repeats counted each).
 */
executions: number, 
/**
 * Executions not ended yet.
 */
unfinished: number, 
/**
 * The share of executions whose task was done.
 */
pass_rate: Share, 
/**
 * Of the executions with tests, the share whose tests passed.
 */
tests_passed: Share, 
/**
 * Of the judged executions, the share the gate passed.
 */
judge_passed: Share, 
/**
 * The mean score of the scored executions.
 */
mean_score: number | null, 
/**
 * Against `base`, task by task: the mean of (this variant's mean score − base's).
 */
score_difference: Difference | null, 
/**
 * Tasks base did not do and this variant did (by most of their executions).
 */
fixed: Array<FlippedTask>, 
/**
 * Tasks base did and this variant did not.
 */
broken: Array<FlippedTask>, 
/**
 * The exact sign test's p-value, fixed against broken.
 */
sign_test_p: number, 
/**
 * Cost, tokens, calls and time.
 */
totals: Totals, 
/**
 * Tasks whose executions did not all end the same (with repeats: flaky, not changed).
 */
flaky: Array<string>, };

/**
 * A variant in the report.
 */
export type VariantInfo = { 
/**
 * Its name.
 */
name: string, 
/**
 * Its file (none for `base`).
 */
file: string | null, 
/**
 * Its model map, asked → answering.
 */
models: Array<[string, string]>, };

/**
 * A verdict named in a report.
 */
export type VerdictRef = { 
/**
 * The run.
 */
run: string, 
/**
 * The task.
 */
task: TaskId, 
/**
 * The attempt judged.
 */
attempt: number, 
/**
 * Seq of the score.
 */
seq: number, 
/**
 * The score.
 */
score: number, 
/**
 * The gate's decision: `pass`, `rescue` or `fail`.
 */
decision: string, 
/**
 * Why it is named.
 */
why: string, };

/**
 * One version of an evaluator, as it said it was.
 */
export type VersionSeen = { 
/**
 * The version (empty: it said none).
 */
version: string, 
/**
 * Verdicts.
 */
verdicts: number, 
/**
 * Mean score.
 */
mean: number, 
/**
 * Share passed.
 */
pass_rate: number, 
/**
 * Its first verdict's week.
 */
first_week: string, 
/**
 * Its first verdict: the version changed there.
 */
first: VerdictRef, };

/**
 * A verdict waiting for a person.
 */
export type Waiting = { 
/**
 * The run.
 */
run: string, 
/**
 * Seq of the `EvalScored` event.
 */
seq: number, 
/**
 * When.
 */
at: Timestamp, 
/**
 * The task.
 */
task: TaskId, 
/**
 * The attempt that was scored.
 */
attempt: number, 
/**
 * Rescues the task had before this score.
 */
rescues_before: number, 
/**
 * Evaluator.
 */
evaluator: string, 
/**
 * Score.
 */
score: number, 
/**
 * Per-dimension scores.
 */
dimensions: { [key in string]: number }, 
/**
 * Notes.
 */
notes: string, 
/**
 * Threshold in force.
 */
threshold: number | null, 
/**
 * The decision.
 */
decision: GateOutcome | null, 
/**
 * What it led to.
 */
consequence: Consequence | null, 
/**
 * Flags.
 */
flags: Array<AuditFlag>, 
/**
 * A later rollback went back before this decision (it stays in the audit).
 */
rolled_back: boolean, 
/**
 * In a git workspace: what the scored attempt had changed, as recorded before the score.
 */
judged?: Judged, 
/**
 * What the evaluator reported it used for this score, when it reported usage.
 */
cost?: Spend, };

/**
 * One ISO week of an evaluator's scores.
 */
export type Week = { 
/**
 * `YYYY-Www`.
 */
week: string, 
/**
 * Verdicts.
 */
verdicts: number, 
/**
 * Mean score.
 */
mean: number, 
/**
 * Share passed.
 */
pass_rate: number, 
/**
 * The versions the evaluator said it was that week.
 */
versions: Array<string>, };

/**
 * Another threshold, or a weighting of the dimensions, to decide the recorded scores again.
 */
export type WhatIf = { 
/**
 * The threshold (each verdict's own where none).
 */
threshold: number | null, 
/**
 * Weights by dimension: the score is their weighted mean (a verdict's own score where it
 * has none of them).
 */
weights: { [key in string]: number }, };

/**
 * What a what-if would have decided for one evaluator.
 */
export type WhatIfResult = { 
/**
 * Passes the recorded decisions had.
 */
passed: number, 
/**
 * Passes the what-if would have.
 */
passes_now: number, 
/**
 * Decisions that flip, each with what became of its work.
 */
flips: Array<Flip>, 
/**
 * Flips that what happened bears out.
 */
borne_out: number, 
/**
 * Flips that what happened goes against.
 */
gone_against: number, };

/**
 * An event as the API sends it: its line (seq, time, kind) and the same words `runlog log`
 * prints for it, so that the web view and the CLI cannot word it differently.
 */
export type Worded = { 
/**
 * What it says, in words.
 */
words: string, 
/**
 * Its seq in the run.
 */
seq: number, 
/**
 * When, in ms since the epoch.
 */
at: number, 
/**
 * What happened.
 */
event: EventKind, };

/**
 * A run's audit as the API sends it: each decision with its words.
 */
export type WordedAudit = { 
/**
 * Every eval decision, in order.
 */
entries: Array<WordedDecision>, 
/**
 * Decisions made outside the gate (by a person, by an evaluator's error), in order.
 */
out_of_gate: Array<OutOfGate>, };

/**
 * An eval decision as the API sends it: the audit's entry with its words.
 */
export type WordedDecision = { 
/**
 * What `runlog audit` prints for it.
 */
words: AuditWords, 
/**
 * Seq of the `EvalScored` event.
 */
seq: number, 
/**
 * When.
 */
at: Timestamp, 
/**
 * The task.
 */
task: TaskId, 
/**
 * The attempt that was scored.
 */
attempt: number, 
/**
 * Rescues the task had before this score.
 */
rescues_before: number, 
/**
 * Evaluator.
 */
evaluator: string, 
/**
 * Score.
 */
score: number, 
/**
 * Per-dimension scores.
 */
dimensions: { [key in string]: number }, 
/**
 * Notes.
 */
notes: string, 
/**
 * Threshold in force.
 */
threshold: number | null, 
/**
 * The decision.
 */
decision: GateOutcome | null, 
/**
 * What it led to.
 */
consequence: Consequence | null, 
/**
 * Flags.
 */
flags: Array<AuditFlag>, 
/**
 * A later rollback went back before this decision (it stays in the audit).
 */
rolled_back: boolean, 
/**
 * In a git workspace: what the scored attempt had changed, as recorded before the score.
 */
judged?: Judged, 
/**
 * What the evaluator reported it used for this score, when it reported usage.
 */
cost?: Spend, };

/**
 * The paths changed in one place, relative to it.
 */
export type Written = { 
/**
 * Where.
 */
place: Place, 
/**
 * The paths created, modified or deleted there (at most [`MAX_PATHS`]).
 */
paths: Array<string>, 
/**
 * How many more were changed than are named.
 */
more: number, };
