/**
 * The query-plan check: EXPLAIN ANALYZE of the heavy user's listing exactly
 * as `listNotes` sends it, run inside `withCallerTransaction` so row-level
 * security and its policies are part of the plan. The listing must come from
 * `notes_owner_recent_idx` with no sequential scan and no sort node, and its
 * total from the owner's counter: no aggregate over the notes.
 *
 * @example
 * ```ts
 * const check = await checkListPlan(claims, { limit: 10, offset: 0 });
 * if (!check.passed) console.error(check.problems);
 * ```
 */
import { type CallerClaims, withCallerTransaction } from "../supabase/functions/_shared/db.ts";
import { listNotes } from "../supabase/functions/_shared/queries/notes.ts";

/** The index that must serve the listing. */
export const ownerIndex = "notes_owner_recent_idx";

interface PlanNode {
  "Node Type": string;
  "Index Name"?: string;
  "Relation Name"?: string;
  "Actual Rows"?: number;
  "Actual Total Time"?: number;
  "Heap Fetches"?: number;
  Plans?: PlanNode[];
}

/** What the plan of one page of the heavy user's listing shows. */
export interface PlanCheck {
  page: { limit: number; offset: number };
  passed: boolean;
  problems: string[];
  /** Every node, outermost first, as "<type> [on <relation>] [using <index>]". */
  nodes: string[];
  planningMs: number;
  executionMs: number;
}

function flatten(node: PlanNode, into: PlanNode[] = []): PlanNode[] {
  into.push(node);
  for (const child of node.Plans ?? []) flatten(child, into);
  return into;
}

function describe(node: PlanNode): string {
  const on = node["Relation Name"] ? ` on ${node["Relation Name"]}` : "";
  const using = node["Index Name"] ? ` using ${node["Index Name"]}` : "";
  return `${node["Node Type"]}${on}${using}`;
}

/** EXPLAIN ANALYZE of the listing of `caller`'s notes, checked against the rules above. */
export async function checkListPlan(caller: CallerClaims, page: { limit: number; offset: number }): Promise<PlanCheck> {
  const listing = listNotes(caller.sub, page);
  const [explained] = await withCallerTransaction(caller, {
    text: `explain (analyze, format json) ${listing.text}`,
    values: listing.values,
    read: (rows: { "QUERY PLAN": { Plan: PlanNode; "Planning Time": number; "Execution Time": number }[] }[]) => rows,
  });
  const [plan] = explained["QUERY PLAN"];
  const nodes = flatten(plan.Plan);
  const problems: string[] = [];
  if (!nodes.some((node) => node["Index Name"] === ownerIndex)) problems.push(`${ownerIndex} is not used`);
  if (nodes.some((node) => node["Node Type"] === "Seq Scan")) problems.push("a sequential scan");
  if (nodes.some((node) => /Sort$/.test(node["Node Type"]))) problems.push("a sort node");
  const countsNotes = nodes.some((node) =>
    node["Node Type"] === "Aggregate" && flatten(node).some((child) => child["Relation Name"] === "notes")
  );
  if (countsNotes) problems.push("the total counts the notes instead of reading the counter");
  return {
    page,
    passed: problems.length === 0,
    problems,
    nodes: nodes.map(describe),
    planningMs: plan["Planning Time"],
    executionMs: plan["Execution Time"],
  };
}
