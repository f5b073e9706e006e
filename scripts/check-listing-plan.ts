/**
 * `npm run check:plan`: the listing's query plan on PostgreSQL. On a scratch
 * database (on TEST_PG_ADMIN_URL's server, default 127.0.0.1:5432), migrated
 * and seeded with a user of 20,000 notes among 200,000, it runs EXPLAIN
 * ANALYZE of that user's pages exactly as `listNotes` sends them, inside
 * `withCallerTransaction` so row-level security and its policies are part of
 * the plan. The listing must come from `notes_owner_recent_idx` with no
 * sequential scan and no sort node, and its total from the owner's counter:
 * no aggregate over the notes. Exits 1 when a page's plan breaks a rule.
 */
import postgres from "postgres";
import { type CallerClaims, closeDb, withCallerTransaction } from "../supabase/functions/_shared/db.ts";
import { listNotes } from "../supabase/functions/_shared/queries/notes.ts";
import { createScratchDatabase, testAnonKey, testJwtSecret } from "../dev/harness/stack.ts";
import { migrate } from "../dev/migrate.ts";
import { seedNotes } from "../bench/seed.ts";

/** The index that must serve the listing. */
const ownerIndex = "notes_owner_recent_idx";

interface PlanNode {
  "Node Type": string;
  "Index Name"?: string;
  "Relation Name"?: string;
  Plans?: PlanNode[];
}

/** What the plan of one page of the heavy user's listing shows. */
interface PlanCheck {
  /** The rules the plan breaks; none when it passes. */
  problems: string[];
  /** Every node, outermost first, as "<type> [on <relation>] [using <index>]". */
  nodes: string[];
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
async function checkListPlan(caller: CallerClaims, page: { limit: number; offset: number }): Promise<PlanCheck> {
  const listing = listNotes(caller.sub, page);
  const [explained] = await withCallerTransaction(caller, {
    text: `explain (analyze, format json) ${listing.text}`,
    values: listing.values,
    read: (rows: { "QUERY PLAN": { Plan: PlanNode; "Execution Time": number }[] }[]) => rows,
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
  return { problems, nodes: nodes.map(describe), executionMs: plan["Execution Time"] };
}

const heavyUserNotes = 20_000;

async function main(): Promise<boolean> {
  const database = await createScratchDatabase("notes_plan");
  try {
    await migrate(database.url, () => {});
    const sql = postgres(database.url, { max: 1, prepare: false, onnotice: () => {} });
    let heavyUser: { id: string };
    try {
      ({ heavyUser } = await seedNotes(sql, {
        password: "plan-check-password",
        bcryptCost: 4,
        plan: { users: 100, notes: 200_000, heavyUserNotes },
      }));
    } finally {
      await sql.end({ timeout: 5 });
    }
    // withCallerTransaction reads the functions' configuration, as in a function.
    const env = { DATABASE_URL: database.url, JWT_SECRET: testJwtSecret, SUPABASE_ANON_KEY: testAnonKey };
    for (const [name, value] of Object.entries(env)) Deno.env.set(name, value);
    const caller = { sub: heavyUser.id, role: "authenticated" as const, token_version: 0 };
    let passed = true;
    for (const page of [{ limit: 10, offset: 0 }, { limit: 100, offset: 0 }, { limit: 10, offset: 10_000 }]) {
      const check = await checkListPlan(caller, page);
      passed &&= check.problems.length === 0;
      const verdict = check.problems.length === 0 ? "ok" : `FAILED (${check.problems.join(", ")})`;
      console.log(
        `${verdict}: limit ${page.limit} offset ${page.offset} of ${heavyUserNotes} notes, ` +
          `${check.executionMs.toFixed(1)} ms: ${check.nodes.join(" > ")}`,
      );
    }
    await closeDb();
    return passed;
  } finally {
    await database.drop();
  }
}

if (!(await main())) Deno.exit(1);
