/**
 * The floor the benchmark compares the functions with: a handler that runs
 * the functions' own SQL (the same query functions, the same pool of
 * `db/transactions.ts`, the same `withCallerTransaction` role and claim settings) and
 * nothing else: no token check, no validation, no envelope, no log line. It
 * serves the gateway's paths, so both targets take the very same requests.
 *
 * It listens twice: on the local stack's bounded server with the stack's
 * bounds, which is what the functions are compared with (the same HTTP
 * server on both sides, so the ratio is what the functions' own code costs,
 * as on hosted Supabase, where neither server is used), and on a bare
 * `Deno.serve`, against which the bench reports what the bounded server
 * itself costs.
 *
 * Run: `deno run -A bench/baseline/server.ts` with the stack's environment.
 */
import { getConfig } from "../../supabase/functions/_shared/config/mod.ts";
import { serveBounded } from "../../dev/bounded-server.ts";
import { readStackSettings, serverBounds } from "../../dev/settings.ts";
import type { CreateNoteBody, Note, NoteOrder, SaveNoteBody } from "../../supabase/functions/_shared/contract/mod.ts";
import { type CallerClaims, withCallerTransaction } from "../../supabase/functions/_shared/db/caller-transactions.ts";
import { withServiceTransaction } from "../../supabase/functions/_shared/db/transactions.ts";
import { completeLogin, passwordAttempt } from "../../supabase/functions/_shared/queries/accounts.ts";
import { verifyPassword } from "../../supabase/functions/_shared/auth/passwords.ts";
import { requestFingerprint } from "../../supabase/functions/_shared/notes/idempotency-key.ts";
import { loginHashInPostgresPath } from "../scenarios.ts";
import { listNotes } from "../../supabase/functions/_shared/queries/note-listing.ts";
import {
  deleteNote,
  insertNote,
  insertNoteOnce,
  selectNote,
  updateNote,
} from "../../supabase/functions/_shared/queries/notes.ts";

/** The token's claims, read without checking the signature: the floor does no token work. */
function claimsOf(req: Request): CallerClaims {
  const jwt = (req.headers.get("authorization") ?? "").replace(/^Bearer\s+/i, "");
  const payload = jwt.split(".")[1] ?? "";
  const json = atob(payload.replaceAll("-", "+").replaceAll("_", "/"));
  return JSON.parse(json);
}

/** The request's JSON body, taken on trust: the floor does no validation. */
async function bodyOf<T>(req: Request): Promise<T> {
  return await req.json();
}

type Route = (req: Request, url: URL) => Promise<unknown>;

const routes: Record<string, Route> = {
  "/functions/v1/notes-fetch": (req, url) => {
    const claims = claimsOf(req);
    const parameter = (name: string) => url.searchParams.get(name) ?? undefined;
    return withCallerTransaction(
      claims,
      listNotes(claims.sub, {
        limit: Number(parameter("limit") ?? 10),
        offset: Number(parameter("offset") ?? 0),
        order: (parameter("order") ?? "createdAt") as NoteOrder,
        status: parameter("status") as Note["status"] | undefined,
        q: parameter("q"),
      }),
    );
  },
  "/functions/v1/notes-get": (req, url) => {
    const claims = claimsOf(req);
    return withCallerTransaction(claims, selectNote(claims.sub, url.searchParams.get("id") ?? ""));
  },
  // With an Idempotency-Key, the same keyed statement as the function's, fingerprint included (it is a value of it).
  "/functions/v1/notes-create": async (req) => {
    const claims = claimsOf(req);
    const given = await bodyOf<CreateNoteBody>(req);
    const body = { ...given, status: given.status ?? "DRAFT" };
    const key = req.headers.get("idempotency-key");
    if (key === null) return withCallerTransaction(claims, insertNote(claims.sub, body));
    return withCallerTransaction(claims, insertNoteOnce(claims.sub, body, key, await requestFingerprint(body)));
  },
  "/functions/v1/notes-save": async (req) => {
    const claims = claimsOf(req);
    const { id, expectedUpdatedAt, ...changes } = await bodyOf<SaveNoteBody>(req);
    const outcome = await withCallerTransaction(claims, updateNote(claims.sub, id, changes, expectedUpdatedAt));
    // A 404 for a version that moved on too, so the benchmark sees when the floor did not do the save.
    return outcome && "done" in outcome ? outcome.done : undefined;
  },
  "/functions/v1/notes-delete": (req, url) => {
    const claims = claimsOf(req);
    const id = url.searchParams.get("id") ?? "";
    return withCallerTransaction(claims, deleteNote(claims.sub, id));
  },
  // Login's floor is the same work without the function's request handling: the attempt counted with the
  // account's hash read, the hash checked here (as the function does), and the session started.
  "/functions/v1/auth/login": (req) =>
    login(req, (password, hash) => verifyPassword(password, hash, getConfig().bcryptCost)),
  // The same, with the hash checked by a Postgres backend (pgcrypto's crypt), as login did before hashing moved into
  // the functions: the bench compares the function's login with it. One round trip more, which on loopback is
  // about a thousandth of a hash.
  [loginHashInPostgresPath]: (req) => login(req, checkInPostgres),
};

/** The floor's login: the attempt, the hash check `check` makes, the session. */
async function login(req: Request, check: (password: string, hash: string | undefined) => Promise<boolean>) {
  const { email, password } = await bodyOf<{ email: string; password: string }>(req);
  const { limits, sessions } = getConfig();
  const attempt = await withServiceTransaction(
    passwordAttempt({ email, address: undefined, userAgent: undefined, limits }),
  );
  const matches = await check(password, attempt.passwordHash);
  if (!matches || !attempt.account || !attempt.passwordHash) return { passwordMatches: false };
  const session = { settings: sessions, userAgent: undefined, address: undefined };
  await withServiceTransaction(
    completeLogin({
      userId: attempt.account.user.id,
      passwordHash: attempt.passwordHash,
      address: undefined,
      session,
    }),
  );
  return { passwordMatches: true };
}

async function checkInPostgres(password: string, hash: string | undefined): Promise<boolean> {
  if (hash === undefined) return false;
  return await withServiceTransaction({
    text: "select extensions.crypt($1, $2) = $2 as matches",
    values: [password, hash],
    read: ([row]: { matches: boolean }[]) => row.matches,
  });
}

async function floor(req: Request): Promise<Response> {
  const url = new URL(req.url);
  const route = routes[url.pathname];
  const result = route ? await route(req, url) : undefined;
  // A 404 for a missing note too, so the benchmark sees when the floor did not do the work.
  return result === undefined ? new Response(null, { status: 404 }) : Response.json(result);
}

const hostname = "127.0.0.1";
const bounded = await serveBounded(floor, {
  hostname,
  port: 0,
  ...serverBounds(readStackSettings(), getConfig().limits.bodyTimeoutMs),
});
const bare = Promise.withResolvers<number>();
Deno.serve({ hostname, port: 0, onListen: ({ port }) => bare.resolve(port) }, floor);
console.log(
  `Ready on http://${hostname}:${bounded.port}/functions/v1 and on Deno.serve at ` +
    `http://${hostname}:${await bare.promise}/functions/v1`,
);
