/**
 * The query-plan check: EXPLAIN ANALYZE of the heavy user's listing exactly
 * as `listNotes` sends it, run inside `withCallerTransaction` so row-level
 * security and its policies are part of the plan. The listing must come from
 * `notes_owner_recent_idx` with no sequential scan and no sort node, and the
 * cost of the total count is reported.
 *
 * @example
 * ```ts
 * const check = await checkListPlan(databaseUrl, claims, { limit: 10, offset: 0 });
 * if (!check.passed) console.error(check.problems);
 * ```
 */
import postgres from "postgres";
import { type CallerClaims, withCallerTransaction } from "../supabase/functions/_shared/db.ts";
import { listNotes } from "../supabase/functions/_shared/queries/notes.ts";

/** The index that must serve the listing and its count. */
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
  /** How the total was counted and what it cost (from EXPLAIN ANALYZE). */
  count?: { node: string; rows: number; heapFetches: number; ms: number };
  planningMs: number;
  executionMs: number;
}

interface CapturedQuery {
  text: string;
  parameters: postgres.ParameterOrJSON<never>[];
}

/** The SQL `listNotes` sends for this page, captured from the driver rather than copied. */
async function listingQuery(databaseUrl: string, owner: string, page: { limit: number; offset: number }) {
  const captured: CapturedQuery[] = [];
  const sql = postgres(databaseUrl, {
    max: 1,
    prepare: false,
    onnotice: () => {},
    debug: (_connection, text, parameters) => captured.push({ text, parameters }),
  });
  try {
    // Rolled back: only the statement's text is wanted here.
    await sql.begin(async (tx) => {
      await listNotes(tx, owner, page);
      throw new Rollback();
    }).catch((error) => {
      if (!(error instanceof Rollback)) throw error;
    });
  } finally {
    await sql.end({ timeout: 5 });
  }
  const query = captured.find((entry) => /\bfrom public\.notes\b/.test(entry.text));
  if (!query) throw new Error("listNotes sent no query on public.notes");
  return query;
}

class Rollback extends Error {}

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
export async function checkListPlan(
  databaseUrl: string,
  caller: CallerClaims,
  page: { limit: number; offset: number },
): Promise<PlanCheck> {
  const query = await listingQuery(databaseUrl, caller.sub, page);
  const [explained] = await withCallerTransaction(
    caller,
    (tx) =>
      tx.unsafe<{ "QUERY PLAN": { Plan: PlanNode; "Planning Time": number; "Execution Time": number }[] }[]>(
        `explain (analyze, format json) ${query.text}`,
        query.parameters,
      ),
  );
  const [plan] = explained["QUERY PLAN"];
  const nodes = flatten(plan.Plan);
  const problems: string[] = [];
  if (!nodes.some((node) => node["Index Name"] === ownerIndex)) problems.push(`${ownerIndex} is not used`);
  if (nodes.some((node) => node["Node Type"] === "Seq Scan")) problems.push("a sequential scan");
  if (nodes.some((node) => /Sort$/.test(node["Node Type"]))) problems.push("a sort node");
  const aggregate = nodes.find((node) => node["Node Type"] === "Aggregate");
  const counted = aggregate && flatten(aggregate).find((node) => node["Relation Name"] === "notes");
  return {
    page,
    passed: problems.length === 0,
    problems,
    nodes: nodes.map(describe),
    count: aggregate && counted
      ? {
        node: describe(counted),
        rows: counted["Actual Rows"] ?? 0,
        heapFetches: counted["Heap Fetches"] ?? 0,
        ms: aggregate["Actual Total Time"] ?? 0,
      }
      : undefined,
    planningMs: plan["Planning Time"],
    executionMs: plan["Execution Time"],
  };
}
