/**
 * The benchmark's verdicts and output: each scenario's ratios to the floor
 * and whether they meet the targets, a Markdown table for the terminal and
 * docs/performance.md, and the JSON record in bench/results/.
 *
 * @example
 * ```ts
 * const row = compare(scenario, rounds);
 * console.log(loadTable([row]));
 * ```
 */
import { type LoadResult, type LoadSample, median, summarize } from "./load.ts";
import type { Scenario } from "./scenarios.ts";

/** The targets, as ratios to the floor measured in the same run. */
export const targets = {
  notes: { minRequestsRatio: 0.9, maxP99Ratio: 1.2 },
  login: { minRequestsRatio: 0.9, maxP99Ratio: Number.POSITIVE_INFINITY },
  /** Login with the hash in the function against the hash checked by Postgres, the design before. */
  loginHashing: { minRequestsRatio: 0.8, maxP99Ratio: Number.POSITIVE_INFINITY },
} as const;

type Target = (typeof targets)[keyof typeof targets];

/** A target as the tables state it. */
function goal(target: Target): string {
  return Number.isFinite(target.maxP99Ratio)
    ? `≥ ${target.minRequestsRatio}x, p99 ≤ ${target.maxP99Ratio}x`
    : `≥ ${target.minRequestsRatio}x`;
}

/** One round of a scenario: the floor's two timed runs and the functions' two between them. */
export interface Round {
  baseline: LoadSample[];
  stack: LoadSample[];
}

/** One scenario on the functions and on the floor. */
export interface Comparison {
  name: string;
  kind: Scenario["kind"];
  /** Every round pooled, for the table's absolute figures. */
  stack: LoadResult;
  baseline: LoadResult;
  /** The median over the rounds of each round's req/s ratio. */
  requestsRatio: number;
  /** Each round's req/s ratio, to show how much they spread. */
  roundRatios: number[];
  /** The median over the rounds of each round's p99 ratio. */
  p99Ratio: number;
  /** Both ratios within target and no failed request on either side. */
  met: boolean;
}

/**
 * Compares the functions' runs of a scenario with the floor's. Each round is
 * compared on its own, and the ratio is the median over the rounds: a burst
 * of other load on the machine during one round does not decide it.
 */
export function compare(
  scenario: Scenario,
  rounds: readonly Round[],
  target: Target = targets[scenario.kind],
): Comparison {
  const perRound = rounds.map((round) => ({ stack: summarize(round.stack), baseline: summarize(round.baseline) }));
  const roundRatios = perRound.map((round) => round.stack.requestsPerSecond / round.baseline.requestsPerSecond);
  const requestsRatio = median(roundRatios);
  const p99Ratio = median(perRound.map((round) => round.stack.p99Ms / round.baseline.p99Ms));
  const stack = summarize(rounds.flatMap((round) => round.stack));
  const baseline = summarize(rounds.flatMap((round) => round.baseline));
  return {
    name: scenario.name,
    kind: scenario.kind,
    stack,
    baseline,
    requestsRatio,
    roundRatios,
    p99Ratio,
    met: stack.failed === 0 && baseline.failed === 0 && requestsRatio >= target.minRequestsRatio &&
      p99Ratio <= target.maxP99Ratio,
  };
}

const fixed = (value: number, digits: number) => Number.isFinite(value) ? value.toFixed(digits) : "n/a";

function table(header: string[], rows: string[][]): string {
  const line = (cells: string[]) => `| ${cells.join(" | ")} |`;
  return [line(header), line(header.map(() => "---")), ...rows.map(line)].join("\n");
}

function failures(result: LoadResult): string {
  return result.failed === 0 ? "" : ` (${result.failed} failed: ${JSON.stringify(result.statuses)})`;
}

/** The load results as a Markdown table: the functions, the floor and their ratios. */
export function loadTable(comparisons: readonly Comparison[]): string {
  return table(
    [
      "Scenario",
      "req/s",
      "p50 ms",
      "p99 ms",
      "floor req/s",
      "floor p50",
      "floor p99",
      "req/s ratio",
      "p99 ratio",
      "Target",
    ],
    comparisons.map((row) => [
      row.name,
      fixed(row.stack.requestsPerSecond, 0) + failures(row.stack),
      fixed(row.stack.p50Ms, 1),
      fixed(row.stack.p99Ms, 1),
      fixed(row.baseline.requestsPerSecond, 0) + failures(row.baseline),
      fixed(row.baseline.p50Ms, 1),
      fixed(row.baseline.p99Ms, 1),
      fixed(row.requestsRatio, 2),
      fixed(row.p99Ratio, 2),
      `${row.met ? "met" : "NOT met"} (${goal(targets[row.kind])})`,
    ]),
  );
}

/**
 * Two loads side by side, each row a comparison whose `stack` is the subject
 * and `baseline` what it is measured against; the target column only where
 * one applies.
 */
function pairTable(
  comparisons: readonly Comparison[],
  labels: { row: string; subject: string; baseline: string },
  target?: Target,
): string {
  const prefix = (label: string, column: string) => label ? `${label} ${column}` : column;
  return table(
    [
      labels.row,
      prefix(labels.subject, "req/s"),
      prefix(labels.subject, "p99 ms"),
      prefix(labels.baseline, "req/s"),
      prefix(labels.baseline, "p99 ms"),
      "req/s ratio",
      "p99 ratio",
      ...(target ? ["Target"] : []),
    ],
    comparisons.map((row) => [
      row.name,
      fixed(row.stack.requestsPerSecond, 0) + failures(row.stack),
      fixed(row.stack.p99Ms, 1),
      fixed(row.baseline.requestsPerSecond, 0) + failures(row.baseline),
      fixed(row.baseline.p99Ms, 1),
      fixed(row.requestsRatio, 2),
      fixed(row.p99Ratio, 2),
      ...(target ? [`${row.met ? "met" : "NOT met"} (${goal(target)})`] : []),
    ]),
  );
}

/**
 * The variants as a Markdown table: each against the plain request it adds a
 * feature to, both on the functions (`stack` is the variant, `baseline` the
 * plain request), with the notes target.
 */
export function variantTable(comparisons: readonly Comparison[]): string {
  return pairTable(comparisons, { row: "Variant", subject: "", baseline: "plain" }, targets.notes);
}

/**
 * The local stack's bounded server against a bare `Deno.serve`, both serving
 * the floor (`stack` is the bounded server): what the bounds cost, reported
 * without a target, since they are a price paid for not being knocked over.
 */
export function serverTable(comparisons: readonly Comparison[]): string {
  return pairTable(comparisons, { row: "Scenario (the floor)", subject: "bounded", baseline: "Deno.serve" });
}

/**
 * The function's login against the floor's login with the hash checked by
 * Postgres (`stack` is the function), with the target for moving the hash.
 */
export function loginHashingTable(comparison: Comparison): string {
  return pairTable([comparison], { row: "Login", subject: "", baseline: "hash in Postgres" }, targets.loginHashing);
}

/** A Markdown table of any rows whose cells are already text. */
export { table as markdownTable };

/** Writes `record` to bench/results/<timestamp>.json and returns the file's path. */
export async function writeResults(record: unknown, startedAt: Date): Promise<string> {
  const stamp = startedAt.toISOString().replaceAll(":", "-").replace(/\.\d+Z$/, "Z");
  const file = new URL(`./results/${stamp}.json`, import.meta.url);
  await Deno.writeTextFile(file, `${JSON.stringify(record, null, 2)}\n`);
  return file.pathname;
}
