/**
 * A removal while the object store is down: the functions reach the stack's Storage endpoints through a TCP proxy
 * the test cuts. The deletion is answered at once (Postgres alone), the removal stays queued while the store does
 * not answer, and happens once it is back.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { freePort } from "../dev/harness/free-port.ts";
import { startTcpProxy, type TcpProxy } from "../dev/harness/tcp-proxy.ts";
import { registerUser } from "./support/api.ts";
import { pngBytes, storeOf, upload } from "./support/attachments.ts";
import { type ScratchStack, startScratchStack } from "./support/scratch-stack.ts";

const serviceKey = "attachments-outage-service-role-key";
let stack: ScratchStack;
let proxy: TcpProxy;

beforeAll(async () => {
  const port = await freePort();
  proxy = await startTcpProxy({ host: "127.0.0.1", port });
  stack = await startScratchStack("attachments_outage", {
    env: {
      PORT: String(port),
      SUPABASE_URL: new URL(proxy.route("http://127.0.0.1:1")).origin,
      SUPABASE_SERVICE_ROLE_KEY: serviceKey,
    },
  });
}, 120_000);
afterAll(async () => {
  await stack?.stop();
  await proxy?.close();
});

it("removes a file deleted while the store is down once the store is back", async () => {
  const ada = await registerUser("ada", { baseUrl: stack.baseUrl });
  const created = await stack.call("/notes-create", { token: ada.accessToken, body: { title: "Outage" } });
  const noteId = (created.body as { data: { id: string } }).data.id;
  const file = await upload(stack.call, ada, noteId, pngBytes());
  // Looked at past the proxy, on the stack's own port.
  const store = storeOf(stack.baseUrl, serviceKey);
  const path = `${ada.id}/${file.id}`;

  proxy.cut();
  const deleted = await stack.call(`/attachments-delete?id=${file.id}`, { method: "DELETE", token: ada.accessToken });
  expect(deleted.status, deleted.text).toBe(200);
  const queued = () =>
    stack.sql<{ attempts: number; last_error: string | null }[]>`
      select attempts, last_error from app.attachment_removals where object_path = ${path}`;
  // The dispatcher tried, the store did not answer (its call times out), and the removal stays queued.
  await expect.poll(async () => (await queued())[0]?.last_error ?? null, { timeout: 30_000, interval: 500 })
    .not.toBeNull();
  expect(await store.holds(path)).toBe(true);

  proxy.restore();
  // Its backoff is over (as if the wait had passed).
  await stack.sql`update app.attachment_removals set next_attempt_at = now() where object_path = ${path}`;
  await expect.poll(() => store.holds(path), { timeout: 20_000 }).toBe(false);
  // Confirmed: its error is cleared, and it waits, without another attempt, for its upload URL to die (bytes put to
  // the URL meanwhile are removed then); after that, the next confirmation settles it.
  await expect.poll(async () => (await queued())[0]?.last_error, { timeout: 5_000 }).toBeNull();
  await stack.sql`update app.attachment_removals set next_attempt_at = now(), settle_at = now()
                  where object_path = ${path}`;
  await expect.poll(async () => (await queued()).length, { timeout: 10_000 }).toBe(0);
}, 90_000);
