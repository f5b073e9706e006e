/**
 * Whether a listing's speed hangs on statistics: the first page of a user who
 * has just imported 20,000 notes against a 10-note user's, on PostgreSQL and
 * on the embedded PGlite, first as the import leaves the table (never
 * analyzed: PostgreSQL before autoanalyze, PGlite always), then after ANALYZE.
 * Each target is a database of its own with a stack of its own on it.
 *
 * `npm run bench:listing` runs only this.
 *
 * @example
 * ```ts
 * console.log(listingPlanTable(await benchListingPlans()));
 * ```
 */
import postgres from "postgres";
import { bearer } from "../supabase/functions/_shared/contract/mod.ts";
import { signAccessToken } from "../supabase/functions/_shared/auth/access-tokens.ts";
import {
  createScratchDatabase,
  sharedStackLimits,
  startStack,
  testAnonKey,
  testJwtSecret,
} from "../dev/harness/stack.ts";
import { startEmbeddedDatabase } from "../dev/harness/embedded-database.ts";
import { markdownTable } from "./report.ts";
import { type FirstPageCost, measureFirstPages } from "./first-pages.ts";
import { analyzeNotes, seedNotes, type SeedPlan } from "./seed.ts";

/** A heavy user of 20,000 notes among 60,000: enough that a plan reading all of them shows. */
const plan: SeedPlan = { users: 100, notes: 60_000, heavyUserNotes: 20_000 };
const samples = 15;

/** One listing's first page on one database, with or without statistics. */
export interface ListingPlanCost extends FirstPageCost {
  database: "PostgreSQL" | "PGlite";
  statistics: "unanalyzed" | "analyzed";
}

/** A token of the seeded heavy user, with a live session, as a sign-in would give. */
async function heavyAuthorization(sql: postgres.Sql, heavyUserId: string): Promise<string> {
  const [account] = await sql<{ id: string; email: string; role: "STANDARD_USER" | "ADMIN"; session_id: string }[]>`
    with started as (
      insert into app.sessions (user_id, expires_at) values (${heavyUserId}, now() + interval '1 day') returning id
    )
    select u.id, u.email, u.role, started.id as session_id from app.users u, started where u.id = ${heavyUserId}`;
  const { jwt } = await signAccessToken(
    {
      user: { id: account.id, email: account.email, role: account.role },
      tokenVersion: 0,
      sessionId: account.session_id,
      level: { aal: "aal1", startedAt: new Date() },
    },
    new TextEncoder().encode(testJwtSecret),
  );
  return bearer(jwt);
}

async function measureOn(database: ListingPlanCost["database"]): Promise<ListingPlanCost[]> {
  const target = database === "PostgreSQL"
    ? { ...(await createScratchDatabase("notes_bench_listing")), embedded: false }
    : await startEmbeddedDatabase();
  try {
    // The stack applies the migrations to the empty database as it starts.
    const stack = await startStack({ databaseUrl: target.url, env: { ...sharedStackLimits, BCRYPT_COST: "4" } });
    // PGlite's one session keeps its unnamed statement for the stack: named ones here.
    const sql = postgres(target.url, { max: 1, prepare: target.embedded, onnotice: () => {} });
    try {
      const seeded = await seedNotes(sql, { password: "bench-password", bcryptCost: 4, plan, statistics: false });
      const heavy = { authorization: await heavyAuthorization(sql, seeded.heavyUser.id), notes: plan.heavyUserNotes };
      const measure = async (statistics: ListingPlanCost["statistics"]) => {
        const costs = await measureFirstPages(stack.baseUrl, { apiKey: testAnonKey, samples, heavy });
        for (const cost of costs) {
          console.log(`  ${database}, ${statistics}, ${cost.listing}: ${cost.ratio.toFixed(2)}x`);
        }
        return costs.map((cost) => ({ ...cost, database, statistics }));
      };
      const unanalyzed = await measure("unanalyzed");
      await analyzeNotes(sql);
      return [...unanalyzed, ...await measure("analyzed")];
    } finally {
      await sql.end({ timeout: 5 });
      await stack.stop();
    }
  } finally {
    await target.drop();
  }
}

/** The first pages on PostgreSQL and on PGlite, each unanalyzed and analyzed. */
export async function benchListingPlans(): Promise<ListingPlanCost[]> {
  return [...await measureOn("PostgreSQL"), ...await measureOn("PGlite")];
}

/** The costs as a Markdown table. */
export function listingPlanTable(costs: ListingPlanCost[]): string {
  return markdownTable(
    ["Database", "Statistics", "Listing", "20,000 notes ms", "10 notes ms", "Ratio", "Target"],
    costs.map((cost) => [
      cost.database,
      cost.statistics,
      cost.listing,
      cost.heavyMs.toFixed(2),
      cost.lightMs.toFixed(2),
      `${cost.ratio.toFixed(2)}x`,
      `${cost.ratio <= cost.target ? "met" : "MISSED"} (≤ ${cost.target}x)`,
    ]),
  );
}

if (import.meta.main) {
  console.log(`First pages, ${plan.heavyUserNotes} notes against 10:`);
  console.log(`\n${listingPlanTable(await benchListingPlans())}`);
}
