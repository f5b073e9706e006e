/**
 * The floor the benchmark compares the functions with: a bare `Deno.serve`
 * that runs the functions' own SQL (the same query functions, the same pool
 * of `db.ts`, the same `withCallerTransaction` role and claim settings) and
 * nothing else: no token check, no validation, no envelope, no log line. It
 * serves the gateway's paths, so both targets take the very same requests.
 *
 * Run: `deno run -A bench/baseline/server.ts` with the stack's environment.
 */
import { getConfig } from "../../supabase/functions/_shared/config.ts";
import type { CreateNoteBody, SaveNoteBody } from "../../supabase/functions/_shared/contract.ts";
import {
  type CallerClaims,
  withCallerTransaction,
  withServiceTransaction,
} from "../../supabase/functions/_shared/db.ts";
import { checkCredentials } from "../../supabase/functions/_shared/queries/accounts.ts";
import { deleteNote, insertNote, listNotes, updateNote } from "../../supabase/functions/_shared/queries/notes.ts";

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
    const limit = Number(url.searchParams.get("limit") ?? 10);
    const offset = Number(url.searchParams.get("offset") ?? 0);
    return withCallerTransaction(claims, listNotes(claims.sub, { limit, offset }));
  },
  "/functions/v1/notes-create": async (req) => {
    const claims = claimsOf(req);
    const body = await bodyOf<CreateNoteBody>(req);
    return withCallerTransaction(claims, insertNote(claims.sub, { ...body, status: body.status ?? "DRAFT" }));
  },
  "/functions/v1/notes-save": async (req) => {
    const claims = claimsOf(req);
    const { id, ...changes } = await bodyOf<SaveNoteBody>(req);
    return withCallerTransaction(claims, updateNote(claims.sub, id, changes));
  },
  "/functions/v1/notes-delete": (req, url) => {
    const claims = claimsOf(req);
    const id = url.searchParams.get("id") ?? "";
    return withCallerTransaction(claims, deleteNote(claims.sub, id));
  },
  // Login's floor is the bcrypt check itself: the same crypt() statement through the same pool.
  "/functions/v1/auth/login": async (req) => {
    const { email, password } = await bodyOf<{ email: string; password: string }>(req);
    const { bcryptCost } = getConfig();
    const match = await withServiceTransaction(checkCredentials({ email, password, bcryptCost, address: undefined }));
    return { passwordMatches: match?.passwordMatches ?? false };
  },
};

Deno.serve({
  hostname: "127.0.0.1",
  port: 0,
  onListen: ({ port }) => console.log(`Ready on http://127.0.0.1:${port}/functions/v1`),
}, async (req) => {
  const url = new URL(req.url);
  const route = routes[url.pathname];
  const result = route ? await route(req, url) : undefined;
  // A 404 for a missing note too, so the benchmark sees when the floor did not do the work.
  return result === undefined ? new Response(null, { status: 404 }) : Response.json(result);
});
