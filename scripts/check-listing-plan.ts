/**
 * `npm run check:plan`: the notes queries' plans on PostgreSQL. On a scratch
 * database (on TEST_PG_ADMIN_URL's server, default 127.0.0.1:5432), migrated
 * and seeded with a user of 20,000 notes among 200,000, it runs EXPLAIN
 * ANALYZE of that user's listings, searches and changes feed exactly as the
 * query functions send them, inside `withCallerTransaction` so row-level
 * security and its policies are part of the plan. Every plan must use the
 * index that starts with the owner and serves it, with no sequential scan; a
 * listing must not sort, and its total must come from the owner's counters
 * (no aggregate over the notes), except a search's, which counts its matches
 * through the search index. It checks the plans twice: on the notes as an
 * import leaves them, with no statistics (PostgreSQL before autoanalyze,
 * PGlite always), and after ANALYZE. Exits 1 when a plan breaks a rule.
 */
import postgres from "postgres";
import {
  type CallerClaims,
  withCallerTransaction,
  withLiveCaller,
} from "../supabase/functions/_shared/db/caller-transactions.ts";
import {
  closeDb,
  type Query,
  type Statement as PlainStatement,
} from "../supabase/functions/_shared/db/transactions.ts";
import { listChanges } from "../supabase/functions/_shared/queries/note-changes.ts";
import { listNotes, type NoteListing } from "../supabase/functions/_shared/queries/note-listing.ts";
import { createScratchDatabase, testAnonKey, testSecrets } from "../dev/harness/stack.ts";
import { migrate } from "../dev/migrate.ts";
import { analyzeNotes, searchWord, seedNotes } from "../bench/seed.ts";

/** A statement as a query function sends it, with the planner settings it is sent with. */
type Statement = PlainStatement & Pick<Query<unknown, unknown>, "plannerSettings">;

interface PlanNode {
  "Node Type": string;
  "Index Name"?: string;
  "Relation Name"?: string;
  "Function Name"?: string;
  Plans?: PlanNode[];
}

/** What one statement's plan shows. */
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

/** What a statement's plan must show. */
interface PlanRules {
  /** Indexes the plan must use. */
  indexes: string[];
  /** Set-returning functions the plan must call (a search's matches). */
  functions?: string[];
  /** Run as the connection's own role, for a statement on the account tables (a security definer's). */
  asOwner?: boolean;
  /** Whether a sort node is allowed (a search sorts its matches; the feed merges two short runs). */
  sorts?: boolean;
  /** Whether an aggregate over the notes is allowed (a search counts its matches). */
  countsNotes?: boolean;
}

/** EXPLAIN ANALYZE of `statement` as `caller`, checked against `rules`. */
async function checkPlan(caller: CallerClaims, statement: Statement, rules: PlanRules): Promise<PlanCheck> {
  const explain = {
    text: `explain (analyze, format json) ${statement.text}`,
    values: statement.values,
    plannerSettings: statement.plannerSettings,
    read: (rows: { "QUERY PLAN": { Plan: PlanNode; "Execution Time": number }[] }[]) => rows,
  };
  const [explained] = await (rules.asOwner ? withLiveCaller(caller, explain) : withCallerTransaction(caller, explain));
  const [plan] = explained["QUERY PLAN"];
  const nodes = flatten(plan.Plan);
  const problems: string[] = [];
  for (const index of rules.indexes) {
    if (!nodes.some((node) => node["Index Name"] === index)) problems.push(`${index} is not used`);
  }
  for (const name of rules.functions ?? []) {
    if (!nodes.some((node) => node["Function Name"] === name)) problems.push(`${name} is not called`);
  }
  if (nodes.some((node) => node["Node Type"] === "Seq Scan")) problems.push("a sequential scan");
  if (!rules.sorts && nodes.some((node) => /Sort$/.test(node["Node Type"]))) problems.push("a sort node");
  const countsNotes = nodes.some((node) =>
    node["Node Type"] === "Aggregate" &&
    flatten(node).some((child) => child["Relation Name"] === "notes")
  );
  if (countsNotes && !rules.countsNotes) problems.push("the total counts the notes instead of reading the counter");
  return { problems, nodes: nodes.map(describe), executionMs: plan["Execution Time"] };
}

/** One listing's page and its total, each with the rules its plan must meet. */
function listingChecks(owner: string, listing: NoteListing): [string, Statement, PlanRules][] {
  const query = listNotes(owner, listing);
  const [total] = query.following ?? [];
  const filters = [
    listing.status && `status ${listing.status}`,
    listing.q && `q ${listing.q}`,
    `order ${listing.order}`,
    `limit ${listing.limit} offset ${listing.offset}`,
  ].filter(Boolean).join(", ");
  if (listing.q !== undefined) {
    // The matches come from app.caller_note_matches; its own statement is checked by wordsLookupCheck. Each match is
    // looked up by its id and owner, which the unique key on both (the one attachments refer to) answers in one probe.
    const search = {
      indexes: ["notes_id_owner_key"],
      functions: ["caller_note_matches"],
      sorts: true,
      countsNotes: true,
    };
    return [[`page (${filters})`, query, search], [`total (${filters})`, total, search]];
  }
  const index = `notes_owner_${listing.status ? "status_" : ""}${
    listing.order === "createdAt" ? "recent" : "edited"
  }_idx`;
  return [[`page (${filters})`, query, { indexes: [index] }], [`total (${filters})`, total, { indexes: [] }]];
}

/**
 * The statement inside `app.caller_note_matches` (the migration's, verbatim),
 * which a plan of its caller shows only as a function scan: the caller's
 * matches must come from `note_words_owner_search_idx`.
 */
function wordsLookupCheck(words: string): [string, Statement, PlanRules] {
  return [
    `the words lookup of a search for ${words}`,
    {
      text: `select w.note_id from app.note_words as w
             where w.created_by = (select auth.uid()) and w.words @@ app.note_search_query($1)`,
      values: [words],
    },
    { indexes: ["note_words_owner_search_idx"], asOwner: true },
  ];
}

const heavyUserNotes = 20_000;

/** Runs every check as `caller` and prints each verdict; whether all passed. */
async function runChecks(caller: CallerClaims, statistics: string): Promise<boolean> {
  const owner = caller.sub;
  const checks: [string, Statement, PlanRules][] = [
    ...listingChecks(owner, { limit: 10, offset: 0, order: "createdAt" }),
    ...listingChecks(owner, { limit: 100, offset: 0, order: "createdAt" }),
    ...listingChecks(owner, { limit: 10, offset: 10_000, order: "createdAt" }),
    ...listingChecks(owner, { limit: 10, offset: 0, order: "updatedAt" }),
    ...listingChecks(owner, { limit: 10, offset: 0, order: "createdAt", status: "PUBLISHED" }),
    ...listingChecks(owner, { limit: 10, offset: 5_000, order: "updatedAt", status: "DRAFT" }),
    ...listingChecks(owner, { limit: 10, offset: 0, order: "createdAt", q: searchWord }),
    ...listingChecks(owner, { limit: 10, offset: 0, order: "updatedAt", q: searchWord, status: "DRAFT" }),
    wordsLookupCheck(searchWord),
    [
      "changes after the middle of the sequence, 100 at a time",
      listChanges(owner, { after: heavyUserNotes / 2, limit: 100 }),
      { indexes: ["notes_owner_changes_idx", "note_tombstones_owner_changes_idx"], sorts: true },
    ],
  ];
  let passed = true;
  for (const [name, statement, rules] of checks) {
    const check = await checkPlan(caller, statement, rules);
    passed &&= check.problems.length === 0;
    const verdict = check.problems.length === 0 ? "ok" : `FAILED (${check.problems.join(", ")})`;
    console.log(
      `${verdict}: ${name} of ${heavyUserNotes} notes, ${statistics}, ${check.executionMs.toFixed(1)} ms: ${
        check.nodes.join(" > ")
      }`,
    );
  }
  return passed;
}

/**
 * The checks on the notes as an import leaves them, before any statistics
 * exist (as on PostgreSQL before autoanalyze, and always on PGlite), then
 * again after ANALYZE: a plan must not depend on them.
 */
async function main(): Promise<boolean> {
  const database = await createScratchDatabase("notes_plan");
  try {
    await migrate(database.url, () => {});
    const sql = postgres(database.url, {
      max: 1,
      prepare: false,
      onnotice: () => {},
    });
    try {
      const { heavyUser } = await seedNotes(sql, {
        password: "plan-check-password",
        bcryptCost: 4,
        plan: { users: 100, notes: 200_000, heavyUserNotes },
        statistics: false,
      });
      // The caller's transaction requires a live session, as a signed-in user's token names one.
      const [{ id: sessionId }] = await sql<{ id: string }[]>`
        insert into app.sessions (user_id, expires_at) values (${heavyUser.id}, now() + interval '1 hour') returning id`;
      // withCallerTransaction reads the functions' configuration, as in a function.
      const env = {
        DATABASE_URL: database.url,
        ...testSecrets,
        SUPABASE_ANON_KEY: testAnonKey,
      };
      for (const [name, value] of Object.entries(env)) Deno.env.set(name, value);
      const caller = { sub: heavyUser.id, role: "authenticated" as const, token_version: 0, session_id: sessionId };
      const unanalyzed = await runChecks(caller, "unanalyzed");
      await analyzeNotes(sql);
      const analyzed = await runChecks(caller, "analyzed");
      await closeDb();
      return unanalyzed && analyzed;
    } finally {
      await sql.end({ timeout: 5 });
    }
  } finally {
    await database.drop();
  }
}

if (!(await main())) Deno.exit(1);
