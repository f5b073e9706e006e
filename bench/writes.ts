/**
 * What a note's insert costs in Postgres itself, with pgbench (which comes
 * with PostgreSQL): a bare single-row insert into `public.notes` per
 * transaction, over 1,000 users, with every trigger and index, against the
 * same insert into copies of the table without its triggers and with only its
 * primary key; the same with the trigger sets of earlier migrations, each on a
 * database of its own migrated only up to them (a before and after in one
 * run); each insert trigger disabled in turn; the server process's CPU time
 * per insert, which other work on a shared machine moves far less than tps;
 * and the WAL each insert writes. Every figure is a ratio to a baseline
 * measured in the same run, in alternating rounds, because the machine is
 * shared; the WAL is the least of its rounds, as other databases of the
 * server write WAL too.
 *
 * `npm run bench:writes` runs only this, on scratch databases of
 * TEST_PG_ADMIN_URL's server (default 127.0.0.1:5432) that it drops after.
 * `BENCH_WRITES_BEFORE` lists the migration versions whose earlier trigger
 * sets it measures beside the current one (comma-separated; empty for none).
 *
 * @example
 * ```ts
 * console.log(writeCostTable(await benchWrites()));
 * ```
 */
import postgres from "postgres";
import { createScratchDatabase } from "../dev/harness/stack.ts";
import { bootstrapIfNeeded, listMigrations, migrate } from "../dev/migrate.ts";
import { runPgbench, tpsOf } from "./pgbench.ts";
import { median } from "./load.ts";
import { markdownTable } from "./report.ts";
import { seedNotes } from "./seed.ts";

export const writeSettings = {
  users: 1_000,
  /** pgbench clients: as many as the cores, so the server is busy without queueing. */
  clients: 2,
  secondsPerRound: Number(Deno.env.get("BENCH_WRITE_SECONDS") || 2),
  /** Short rounds, many of them: a burst of other load on the machine spoils one round, not the ratio. */
  rounds: Number(Deno.env.get("BENCH_WRITE_ROUNDS") || 11),
  /** Single-client transactions per WAL sample. */
  walInserts: 2_000,
  /** Transactions per sample of a backend's CPU time. */
  cpuInserts: 2_000,
  /**
   * The trigger sets measured beside the current one: each the migrations before the version named. By default
   * the set before migration 20261128000400_cheaper_note_writes (the starting point), the one before
   * 20261128000500_note_inserts_in_one_trigger (after the first of its changes), and the one before
   * 20261130000100_note_cap_checked_by_key (the anonymous note cap as a join).
   */
  before: (Deno.env.get("BENCH_WRITES_BEFORE") ?? "20261128000400,20261128000500,20261130000100").split(",").filter(
    Boolean,
  ),
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

/** One set of triggers on public.notes: what they add to a bare insert. */
export interface TriggerSetCost {
  /** "current", or "before <version>": the migrations before that version. */
  triggers: string;
  /** The insert into public.notes, median of the rounds. */
  tps: number;
  /**
   * What the triggers add to an insert, counted in inserts without them: the untriggered copy's tps over this
   * one's, minus 1, in the same round (median, and the least and most of the rounds).
   */
  overhead: number;
  overheadRange: [number, number];
  /**
   * The same from the server's CPU time per insert, which other work on the machine barely moves: the backend's
   * own time (user and system, from /proc) for a loop of single-row inserts each parsed, planned and committed
   * on its own (median of the rounds, and their least and most); undefined where /proc shows no server process.
   */
  cpuOverhead?: number;
  cpuOverheadRange?: [number, number];
  cpuMicrosPerInsert?: number;
  walBytesPerInsert: number;
}

export interface WriteCosts {
  triggerSets: TriggerSetCost[];
  /** The untriggered copy and the primary key only copy, for the WAL and tps beside the trigger sets. */
  untriggered: { tps: number; walBytesPerInsert: number; cpuMicrosPerInsert?: number };
  primaryKeyOnly: { tps: number; walBytesPerInsert: number; ratio: number };
  /** The current trigger set's variants, each against the plain insert. */
  variants: WriteCost[];
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
  return await runPgbench(target.database, file, args, {
    cwd: target.scripts,
    // What an insert costs the server, not how long this machine's disk takes to flush a commit.
    env: { PGOPTIONS: "-c synchronous_commit=off" },
  });
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
  return tpsOf(output);
}

async function walBytesPerInsert(target: Target, sql: postgres.Sql, script: string): Promise<number> {
  const samples: number[] = [];
  for (let round = 0; round < 5; round++) {
    const [{ lsn: before }] = await sql<{ lsn: string }[]>`select pg_current_wal_lsn()::text as lsn`;
    await pgbench(target, script, ["-c", "1", "-t", String(writeSettings.walInserts)]);
    const [{ bytes }] = await sql<{ bytes: string }[]>`
      select pg_wal_lsn_diff(pg_current_wal_lsn(), ${before}::pg_lsn)::text as bytes`;
    samples.push(Number(bytes) / writeSettings.walInserts);
  }
  return Math.min(...samples);
}

/** The insert of `insertScript` for a loop in one server process: the user drawn there, the statement parsed there. */
function insertStatement(table: string, users: number): string {
  return `insert into ${table} (created_by, title, content, status) values (md5('bench-user-' || ` +
    `(1 + floor(random() * ${users}))::int)::uuid, 'A benchmark note', 'Its content, a sentence of a few words.', 'DRAFT')`;
}

/**
 * CPU time of the connection's server process per insert, in microseconds: single-row inserts each in a
 * transaction of its own (a DO loop that commits after each, the statement parsed and planned every time as
 * pgbench's are), the process's user and system time read from /proc before and after. Undefined when the
 * server's process cannot be read there (a server on another machine).
 */
async function cpuMicrosPerInsert(sql: postgres.Sql, table: string, users: number): Promise<number | undefined> {
  const [{ pid }] = await sql<{ pid: number }[]>`select pg_backend_pid() as pid`;
  const ticks = async () => {
    try {
      // Fields 14 and 15 of /proc/<pid>/stat, utime and stime, in clock ticks (100 a second on Linux), of a
      // process named postgres (not another one under the same number, when the server runs elsewhere).
      const [name, rest] = (await Deno.readTextFile(`/proc/${pid}/stat`)).split(") ");
      if (!name.endsWith("(postgres")) return undefined;
      const fields = rest.split(" ");
      return Number(fields[11]) + Number(fields[12]);
    } catch {
      return undefined;
    }
  };
  const before = await ticks();
  if (before === undefined) return undefined;
  const { cpuInserts } = writeSettings;
  await sql.unsafe(`set synchronous_commit = off`);
  await sql.unsafe(`do $$ begin for i in 1..${cpuInserts} loop
    execute $insert$${insertStatement(table, users)}$insert$;
    commit;
  end loop; end $$`);
  const after = await ticks();
  return after === undefined ? undefined : ((after - before) * 10_000) / cpuInserts;
}

/** The insert triggers of public.notes, by name. */
async function insertTriggers(sql: postgres.Sql): Promise<string[]> {
  const rows = await sql<{ name: string }[]>`
    select tgname as name from pg_trigger
    where tgrelid = 'public.notes'::regclass and not tgisinternal and (tgtype & 4) <> 0
    order by tgname`;
  return rows.map((row) => row.name);
}

const spread = (values: number[]) => `${Math.min(...values).toFixed(2)}..${Math.max(...values).toFixed(2)}`;

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
        `(${median(ratios).toFixed(2)}x; rounds ${spread(ratios)})`,
    );
  }
  return costs;
}

/** A seeded database, migrated up to (not including) `before`, or fully. */
interface TriggerSet {
  label: string;
  url: string;
  target: Target;
  sql: postgres.Sql;
  drop(): Promise<void>;
}

/** Applies the migrations before version `before` as the local stack does (the CLI's history left aside). */
async function migrateBefore(databaseUrl: string, before: string): Promise<void> {
  const sql = postgres(databaseUrl, { prepare: false, max: 1, onnotice: () => {} });
  try {
    await bootstrapIfNeeded(sql, () => {});
    const directory = new URL("../supabase/migrations/", import.meta.url);
    for (const migration of await listMigrations()) {
      if (migration.version >= before) break;
      const text = await Deno.readTextFile(new URL(migration.file, directory));
      await sql.begin((tx) => tx.unsafe(text));
    }
  } finally {
    await sql.end({ timeout: 5 });
  }
}

async function openTriggerSet(before: string | undefined, scripts: string): Promise<TriggerSet> {
  const database = await createScratchDatabase("notes_bench_writes");
  try {
    if (before) await migrateBefore(database.url, before);
    else await migrate(database.url, () => {});
    const sql = postgres(database.url, { max: 1, prepare: false, onnotice: () => {} });
    await seedNotes(sql, {
      password: "bench-password",
      bcryptCost: 4,
      plan: { users: writeSettings.users, notes: 100_000, heavyUserNotes: 1_000 },
    });
    const target = { database: new URL(database.url), scripts };
    // Every user's counter row exists, as for a user's every note but the first.
    await tps(target, insertScript("public.notes", writeSettings.users));
    return {
      label: before ? `before ${before}` : "current",
      url: database.url,
      target,
      sql,
      async drop() {
        await sql.end({ timeout: 5 });
        await database.drop();
      },
    };
  } catch (error) {
    await database.drop();
    throw error;
  }
}

/**
 * Each trigger set's insert against the untriggered copy of its own table, in rounds that measure each once, in an
 * order that turns by one each round. Each set has its own copy because the sets' tables differ in more than their
 * triggers: the current one has an index the older ones lack (the key of the attachments' reference to their note).
 */
async function compareTriggerSets(sets: TriggerSet[], current: TriggerSet): Promise<WriteCosts> {
  const { users } = writeSettings;
  const run = (label: string, set: TriggerSet, table: string) => ({
    label,
    set,
    table,
    script: insertScript(table, users),
    tps: [] as number[],
    cpu: [] as (number | undefined)[],
  });
  type Run = ReturnType<typeof run>;
  const pairs = sets.map((set) => ({
    bare: run(`${set.label}, untriggered`, set, untriggered),
    set: run(set.label, set, "public.notes"),
  }));
  const bare = pairs.find((pair) => pair.set.set === current)!.bare;
  const keyOnly = run("primary key only", current, primaryKeyOnly);
  const runs = [keyOnly, ...pairs.flatMap((pair) => [pair.bare, pair.set])];
  for (let round = 0; round < writeSettings.rounds; round++) {
    for (let index = 0; index < runs.length; index++) {
      const next = runs[(index + round) % runs.length];
      next.tps.push(await tps(next.set.target, next.script));
      next.cpu.push(await cpuMicrosPerInsert(next.set.sql, next.table, users));
    }
  }
  // Per round: the untriggered copy's tps over the set's, and the set's CPU time over the copy's.
  const overheads = (of: Run, copy: Run) => of.tps.map((value, round) => copy.tps[round] / value - 1);
  const cpuOverheads = (of: Run, copy: Run) =>
    of.cpu.every((value) => value !== undefined) && copy.cpu.every((value) => value !== undefined)
      ? of.cpu.map((value, round) => value! / copy.cpu[round]! - 1)
      : undefined;
  const medianOf = (values: (number | undefined)[]) =>
    values.every((value) => value !== undefined) ? median(values as number[]) : undefined;
  const triggerSets: TriggerSetCost[] = [];
  for (const { bare: copy, set } of pairs) {
    const tpsOverheads = overheads(set, copy);
    const cpu = cpuOverheads(set, copy);
    const wal = await walBytesPerInsert(set.set.target, set.set.sql, set.script);
    triggerSets.push({
      triggers: set.label,
      tps: median(set.tps),
      overhead: median(tpsOverheads),
      overheadRange: [Math.min(...tpsOverheads), Math.max(...tpsOverheads)],
      cpuOverhead: cpu && median(cpu),
      cpuOverheadRange: cpu && [Math.min(...cpu), Math.max(...cpu)],
      cpuMicrosPerInsert: medianOf(set.cpu),
      walBytesPerInsert: wal,
    });
    console.log(
      `  ${set.label}: ${median(set.tps).toFixed(0)} tps, triggers add ${median(tpsOverheads).toFixed(2)} ` +
        `inserts without them (rounds ${spread(tpsOverheads)}); in CPU time ${cpu ? median(cpu).toFixed(2) : "-"}` +
        ` (rounds ${cpu ? spread(cpu) : "-"}); WAL ${wal.toFixed(0)} B`,
    );
  }
  return {
    triggerSets,
    untriggered: {
      tps: median(bare.tps),
      cpuMicrosPerInsert: medianOf(bare.cpu),
      walBytesPerInsert: await walBytesPerInsert(current.target, current.sql, bare.script),
    },
    primaryKeyOnly: {
      tps: median(keyOnly.tps),
      ratio: median(keyOnly.tps.map((value, round) => value / bare.tps[round])),
      walBytesPerInsert: await walBytesPerInsert(current.target, current.sql, keyOnly.script),
    },
    variants: [],
  };
}

/** The copies of public.notes without its triggers, in a trigger set's database. */
async function createCopies(sql: postgres.Sql): Promise<void> {
  await sql.unsafe(`create table ${untriggered} (like public.notes including all)`);
  await sql.unsafe(`create table ${primaryKeyOnly} (like public.notes including defaults including constraints)`);
  await sql.unsafe(`alter table ${primaryKeyOnly} add primary key (id)`);
  // The copies' change numbers come from a sequence, unique per user as the trigger's are and far above the
  // seeded ones, so the copy keeps the unique index of the changes feed.
  await sql.unsafe(`create sequence public.bench_notes_change_seq`);
  await sql.unsafe(
    `alter table ${untriggered} alter column change_seq set default 1000000000000 + nextval('public.bench_notes_change_seq')`,
  );
  await sql.unsafe(`alter table ${primaryKeyOnly} alter column change_seq set default 0`);
  // The copies start with the notes' rows, so their indexes are as large as the table's and only the triggers differ.
  for (const copy of [untriggered, primaryKeyOnly]) {
    await sql.unsafe(`insert into ${copy} select * from public.notes`);
    await sql.unsafe(`vacuum analyze ${copy}`);
  }
}

/** The current set's variants: each insert trigger disabled in turn, and all notes by one user. */
async function currentVariants(current: TriggerSet): Promise<WriteCost[]> {
  const { users } = writeSettings;
  const { sql, target } = current;
  const plain = insertScript("public.notes", users);
  // Without a trigger that numbers the change, the column takes the copies' sequence instead.
  const toggle = (trigger: string, state: "enable" | "disable") => async () => {
    // Far above the seeded numbers, which the unique index of the feed holds.
    const numbers = state === "disable"
      ? "set default 1000000000000 + nextval('public.bench_notes_change_seq')"
      : "drop default";
    await sql.unsafe(`alter table public.notes ${state} trigger ${trigger}, alter column change_seq ${numbers}`);
  };
  return await compareInserts(target, plain, [
    ...(await insertTriggers(sql)).map((trigger) => ({
      name: `without ${trigger}`,
      users,
      script: plain,
      prepare: toggle(trigger, "disable"),
      restore: toggle(trigger, "enable"),
    })),
    { name: "every trigger and index, one user", users: 1, script: insertScript("public.notes", 1) },
    { name: "without the triggers, one user", users: 1, script: insertScript(untriggered, 1) },
  ]);
}

/** The costs as Markdown tables: the trigger sets, then the current set's variants. */
export function writeCostTable(costs: WriteCosts): string {
  const range = (values?: [number, number]) => values ? `${values[0].toFixed(2)}..${values[1].toFixed(2)}` : "";
  const sets = markdownTable(
    [
      "Insert into public.notes",
      "tps",
      "Triggers add, in inserts without them (tps)",
      "Rounds",
      "In CPU time",
      "Rounds",
      "CPU µs/insert",
      "WAL bytes/insert",
    ],
    [
      ...costs.triggerSets.map((set) => [
        `every trigger and index, ${set.triggers}`,
        set.tps.toFixed(0),
        set.overhead.toFixed(2),
        range(set.overheadRange),
        set.cpuOverhead?.toFixed(2) ?? "",
        range(set.cpuOverheadRange),
        set.cpuMicrosPerInsert?.toFixed(0) ?? "",
        set.walBytesPerInsert.toFixed(0),
      ]),
      [
        "without the triggers",
        costs.untriggered.tps.toFixed(0),
        "0",
        "",
        "0",
        "",
        costs.untriggered.cpuMicrosPerInsert?.toFixed(0) ?? "",
        costs.untriggered.walBytesPerInsert.toFixed(0),
      ],
      [
        `primary key only (${costs.primaryKeyOnly.ratio.toFixed(2)}x the tps without the triggers)`,
        costs.primaryKeyOnly.tps.toFixed(0),
        "",
        "",
        "",
        "",
        "",
        costs.primaryKeyOnly.walBytesPerInsert.toFixed(0),
      ],
    ],
  );
  const variants = markdownTable(
    ["Current triggers: insert into public.notes", "Users", "tps", "Ratio to every trigger and index"],
    costs.variants.map((cost) => [cost.variant, String(cost.users), cost.tps.toFixed(0), `${cost.ratio.toFixed(2)}x`]),
  );
  return `${sets}\n\n${variants}`;
}

/**
 * The write costs on scratch databases of their own (1,000 users and 100,000
 * notes each), so the inserts and the tables they add touch no other measurement.
 */
export async function benchWrites(): Promise<WriteCosts> {
  const scripts = await Deno.makeTempDir({ prefix: "bench-writes-" });
  const sets: TriggerSet[] = [];
  try {
    for (const before of writeSettings.before) sets.push(await openTriggerSet(before, scripts));
    const current = await openTriggerSet(undefined, scripts);
    sets.push(current);
    for (const set of sets) await createCopies(set.sql);
    const costs = await compareTriggerSets(sets, current);
    costs.variants = await currentVariants(current);
    return costs;
  } finally {
    for (const set of sets) await set.drop();
    await Deno.remove(scripts, { recursive: true });
  }
}

if (import.meta.main) {
  console.log(`Bare inserts, ${writeSettings.clients} clients, ${writeSettings.rounds} rounds:`);
  console.log(`\n${writeCostTable(await benchWrites())}`);
}
