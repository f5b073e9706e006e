/**
 * What a note's insert costs in Postgres itself, with pgbench (which comes
 * with PostgreSQL): a bare single-row insert into `public.notes` per
 * transaction, over 1,000 users or all by one user, with every trigger and
 * index, against the same insert into copies of the table without its
 * triggers and with only its primary key, and with each insert trigger
 * disabled in turn; and the WAL each insert writes. Every figure is a ratio
 * to a baseline measured in the same run, in alternating rounds, because the
 * machine is shared; the WAL is the least of its rounds, as other databases
 * of the server write WAL too.
 *
 * `npm run bench:writes` runs only this, on a scratch database of
 * TEST_PG_ADMIN_URL's server (default 127.0.0.1:5432) that it drops after.
 *
 * @example
 * ```ts
 * console.log(writeCostTable(await benchWrites()));
 * ```
 */
import postgres from "postgres";
import { createScratchDatabase } from "../dev/harness/stack.ts";
import { migrate } from "../dev/migrate.ts";
import { runCommand } from "../dev/processes.ts";
import { median } from "./load.ts";
import { markdownTable } from "./report.ts";
import { seedNotes } from "./seed.ts";

export const writeSettings = {
  users: 1_000,
  /** pgbench clients: as many as the cores, so the server is busy without queueing. */
  clients: 2,
  secondsPerRound: Number(Deno.env.get("BENCH_WRITE_SECONDS") || 2),
  /** Short rounds, many of them: a burst of other load on the machine spoils one round, not the ratio. */
  rounds: 5,
  /** Single-client transactions per WAL sample. */
  walInserts: 2_000,
};

/** One variant of the insert against the baseline of the same run. */
export interface WriteCost {
  variant: string;
  users: number;
  tps: number;
  /** The variant's tps over the plain table's with every trigger and index (per-round median). */
  ratio: number;
  walBytesPerInsert?: number;
}

/** The tables the variants insert into: the real one and two copies made for the run. */
const untriggered = "public.bench_notes_untriggered";
const primaryKeyOnly = "public.bench_notes_primary_key_only";

function insertScript(table: string, users: number): string {
  // The seed's users: md5('bench-user-<n>'), the same user ids across runs.
  return `\\set u random(1, ${users})
insert into ${table} (created_by, title, content, status)
values (md5('bench-user-' || :u)::uuid, 'A benchmark note', 'Its content, a sentence of a few words.', 'DRAFT');
`;
}

interface Target {
  database: URL;
  scripts: string;
}

async function pgbench(target: Target, script: string, args: string[]): Promise<string> {
  const file = `${target.scripts}/${crypto.randomUUID()}.sql`;
  await Deno.writeTextFile(file, script);
  const { database } = target;
  const result = await runCommand("pgbench", [
    "-n",
    "-h",
    database.hostname,
    "-p",
    database.port || "5432",
    "-U",
    decodeURIComponent(database.username) || "postgres",
    "-f",
    file,
    ...args,
    database.pathname.slice(1),
  ], {
    cwd: target.scripts,
    // What an insert costs the server, not how long this machine's disk takes to flush a commit.
    env: { PGOPTIONS: "-c synchronous_commit=off" },
  });
  if (!result.ok) throw new Error(`pgbench failed: ${result.stderr}`);
  return result.stdout;
}

async function tps(target: Target, script: string): Promise<number> {
  const { clients, secondsPerRound } = writeSettings;
  const output = await pgbench(target, script, [
    "-c",
    String(clients),
    "-j",
    String(clients),
    "-T",
    String(secondsPerRound),
  ]);
  const match = /tps = ([\d.]+) \(without initial connection time\)/.exec(output);
  if (!match) throw new Error(`pgbench printed no tps: ${output}`);
  return Number(match[1]);
}

async function walBytesPerInsert(target: Target, sql: postgres.Sql, script: string): Promise<number> {
  const samples: number[] = [];
  for (let round = 0; round < writeSettings.rounds; round++) {
    const [{ lsn: before }] = await sql<{ lsn: string }[]>`select pg_current_wal_lsn()::text as lsn`;
    await pgbench(target, script, ["-c", "1", "-t", String(writeSettings.walInserts)]);
    const [{ bytes }] = await sql<{ bytes: string }[]>`
      select pg_wal_lsn_diff(pg_current_wal_lsn(), ${before}::pg_lsn)::text as bytes`;
    samples.push(Number(bytes) / writeSettings.walInserts);
  }
  return Math.min(...samples);
}

/** The insert triggers of public.notes, by name. */
async function insertTriggers(sql: postgres.Sql): Promise<string[]> {
  const rows = await sql<{ name: string }[]>`
    select tgname as name from pg_trigger
    where tgrelid = 'public.notes'::regclass and not tgisinternal and (tgtype & 4) <> 0
    order by tgname`;
  return rows.map((row) => row.name);
}

/**
 * Each variant against the plain insert, in rounds of plain, variant,
 * variant, plain; `prepare`/`restore` switch a variant on and off around its runs.
 */
async function compareInserts(
  target: Target,
  baseline: string,
  variants: {
    name: string;
    users: number;
    script: string;
    prepare?: () => Promise<void>;
    restore?: () => Promise<void>;
  }[],
): Promise<WriteCost[]> {
  const costs: WriteCost[] = [];
  for (const variant of variants) {
    const ratios: number[] = [];
    const measured: number[] = [];
    const baselines: number[] = [];
    for (let round = 0; round < writeSettings.rounds; round++) {
      const before = await tps(target, baseline);
      await variant.prepare?.();
      const first = await tps(target, variant.script);
      const second = await tps(target, variant.script);
      await variant.restore?.();
      const after = await tps(target, baseline);
      ratios.push((first + second) / (before + after));
      measured.push((first + second) / 2);
      baselines.push((before + after) / 2);
    }
    costs.push({ variant: variant.name, users: variant.users, tps: median(measured), ratio: median(ratios) });
    console.log(
      `  ${variant.name}: ${median(measured).toFixed(0)} tps vs ${median(baselines).toFixed(0)} ` +
        `(${median(ratios).toFixed(2)}x; rounds ${ratios.map((ratio) => ratio.toFixed(2)).join(", ")})`,
    );
  }
  return costs;
}

/** Every variant's tps as a ratio to the plain insert's in the same run, and the WAL per insert. */
async function measureWriteCosts(databaseUrl: string): Promise<WriteCost[]> {
  const sql = postgres(databaseUrl, { max: 1, prepare: false, onnotice: () => {} });
  const target = { database: new URL(databaseUrl), scripts: await Deno.makeTempDir({ prefix: "bench-writes-" }) };
  const { users } = writeSettings;
  try {
    await sql.unsafe(`create table ${untriggered} (like public.notes including all)`);
    await sql.unsafe(`create table ${primaryKeyOnly} (like public.notes including defaults including constraints)`);
    await sql.unsafe(`alter table ${primaryKeyOnly} add primary key (id)`);
    // The copies' change numbers come from a sequence, unique per user as the trigger's are, so the copy keeps
    // the unique index of the changes feed.
    await sql.unsafe(`create sequence public.bench_notes_change_seq`);
    await sql.unsafe(
      `alter table ${untriggered} alter column change_seq set default nextval('public.bench_notes_change_seq')`,
    );
    await sql.unsafe(`alter table ${primaryKeyOnly} alter column change_seq set default 0`);
    const plain = insertScript("public.notes", users);
    // Every user's counter row exists, as for a user's every note but the first.
    await tps(target, plain);
    // Without a trigger that numbers the change, the column takes the copies' sequence instead.
    const toggle = (trigger: string, state: "enable" | "disable") => async () => {
      // Far above the seeded numbers, which the unique index of the feed holds.
      const numbers = state === "disable"
        ? "set default 1000000000000 + nextval('public.bench_notes_change_seq')"
        : "drop default";
      await sql.unsafe(`alter table public.notes ${state} trigger ${trigger}, alter column change_seq ${numbers}`);
    };
    const costs = [
      { variant: "every trigger and index", users, tps: 0, ratio: 1 },
      ...await compareInserts(target, plain, [
        { name: "without the triggers", users, script: insertScript(untriggered, users) },
        { name: "primary key only", users, script: insertScript(primaryKeyOnly, users) },
        ...(await insertTriggers(sql)).map((trigger) => ({
          name: `without ${trigger}`,
          users,
          script: plain,
          prepare: toggle(trigger, "disable"),
          restore: toggle(trigger, "enable"),
        })),
        { name: "every trigger and index, one user", users: 1, script: insertScript("public.notes", 1) },
        { name: "without the triggers, one user", users: 1, script: insertScript(untriggered, 1) },
      ]),
    ];
    costs[0].tps = await tps(target, plain);
    for (
      const [variant, table] of [["every trigger and index", "public.notes"], [
        "without the triggers",
        untriggered,
      ], ["primary key only", primaryKeyOnly]]
    ) {
      const cost = costs.find((row) => row.variant === variant && row.users === users);
      if (cost) cost.walBytesPerInsert = await walBytesPerInsert(target, sql, insertScript(table, users));
    }
    return costs;
  } finally {
    await sql.unsafe(`drop table if exists ${untriggered}, ${primaryKeyOnly}`);
    await sql.unsafe(`drop sequence if exists public.bench_notes_change_seq cascade`);
    await sql.end({ timeout: 5 });
    await Deno.remove(target.scripts, { recursive: true });
  }
}

/** The costs as a Markdown table. */
export function writeCostTable(costs: WriteCost[]): string {
  return markdownTable(
    ["Insert into public.notes", "Users", "tps", "Ratio to every trigger and index", "WAL bytes per insert"],
    costs.map((cost) => [
      cost.variant,
      String(cost.users),
      cost.tps.toFixed(0),
      `${cost.ratio.toFixed(2)}x`,
      cost.walBytesPerInsert === undefined ? "" : cost.walBytesPerInsert.toFixed(0),
    ]),
  );
}

/**
 * The write costs on a scratch database of their own (1,000 users and 100,000
 * notes), so the inserts and the tables they add touch no other measurement.
 */
export async function benchWrites(): Promise<WriteCost[]> {
  const database = await createScratchDatabase("notes_bench_writes");
  try {
    await migrate(database.url, () => {});
    const sql = postgres(database.url, { max: 1, prepare: false, onnotice: () => {} });
    try {
      await seedNotes(sql, {
        password: "bench-password",
        bcryptCost: 4,
        plan: { users: writeSettings.users, notes: 100_000, heavyUserNotes: 1_000 },
      });
    } finally {
      await sql.end({ timeout: 5 });
    }
    return await measureWriteCosts(database.url);
  } finally {
    await database.drop();
  }
}

if (import.meta.main) {
  console.log(`Bare inserts, ${writeSettings.clients} clients, ${writeSettings.rounds} rounds:`);
  console.log(`\n${writeCostTable(await benchWrites())}`);
}
