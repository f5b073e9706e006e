/**
 * Only the function path against the database's rate (part of `npm run bench`): `notes-create` over 1,000 users
 * against pgbench of the transaction it sends and against the floor's `notes-create` on the stack's HTTP server and on
 * `Deno.serve`, on a fresh database with those users and no notes, in about four and a half minutes instead of the
 * whole benchmark's thirty.
 *
 * `npm run bench:function-path`. DATABASE_URL names an empty database to migrate, or a fresh one on 127.0.0.1:5432
 * is made and dropped. BENCH_SECONDS sets each timed run (default 10).
 */
import { benchFunctionPath, functionPathSettings, functionPathTable } from "./function-path.ts";

const seconds = Number(Deno.env.get("BENCH_SECONDS") || 10);
const result = await benchFunctionPath(seconds);
console.log(
  `## notes-create over ${functionPathSettings.users} users against pgbench of its transaction (${seconds} s runs)\n`,
);
console.log(functionPathTable(result));
