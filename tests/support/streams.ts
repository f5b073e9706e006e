/**
 * What the live update stream's suites share: a stack's calls, a second
 * device, writes that must succeed, the feed after a cursor, a stream open
 * and ready, and the check that changes arrive within a second.
 */
import { expect } from "vitest";
import type { ChangeList, Note } from "../../supabase/functions/_shared/contract/mod.ts";
import type { ApiResponse, RegisteredUser } from "./api.ts";
import { registerUser } from "./api.ts";
import { expectSession } from "./auth.ts";
import { openStream, type StreamMessage } from "../../dev/harness/event-stream.ts";
import { changeListEnvelope, noteEnvelope } from "./notes.ts";
import type { ScratchStack } from "./scratch-stack.ts";

export const isEvent = (name: string) => (message: StreamMessage) => message.kind === "event" && message.event === name;

/** What these tests need of a stack: where it is, and a call to it. */
export type Stack = Pick<ScratchStack, "baseUrl" | "call">;

/** A second device of `user`: a session of its own, from a login. */
export async function secondSession(stack: Stack, user: RegisteredUser): Promise<RegisteredUser> {
  const session = expectSession(
    await stack.call("/auth/login", { body: { email: user.email, password: user.password } }),
    200,
  );
  return { ...user, accessToken: session.accessToken, refreshToken: session.refreshToken };
}

export async function create(stack: Stack, user: RegisteredUser, title: string): Promise<Note> {
  const response = await stack.call("/notes-create", { token: user.accessToken, body: { title } });
  expect(response.status, response.text).toBe(201);
  return noteEnvelope.parse(response.body).data;
}

export async function save(stack: Stack, user: RegisteredUser, id: string, content: string): Promise<ApiResponse> {
  const response = await stack.call("/notes-save", { token: user.accessToken, body: { id, content } });
  expect(response.status, response.text).toBe(200);
  return response;
}

export async function remove(stack: Stack, user: RegisteredUser, id: string): Promise<void> {
  const response = await stack.call(`/notes-delete?id=${id}`, { token: user.accessToken, method: "DELETE" });
  expect(response.status, response.text).toBe(200);
}

/** Every change of `/notes-changes` after `since`, page by page. */
export async function feedSince(stack: ScratchStack, user: RegisteredUser, since: string): Promise<unknown[]> {
  const seen: unknown[] = [];
  let cursor = since;
  for (;;) {
    const response = await stack.call(`/notes-changes?since=${cursor}`, { token: user.accessToken });
    expect(response.status, response.text).toBe(200);
    const page: ChangeList = changeListEnvelope.parse(response.body).data;
    seen.push(...page.changes);
    cursor = page.cursor;
    if (!page.hasMore) return seen;
  }
}

/** Opens a stream and waits for its `ready` event; returns the stream and the cursor it stands at. */
export async function openReady(
  stack: Stack,
  user: RegisteredUser,
  from: { since?: string; lastEventId?: string } = {},
) {
  const stream = await openStream(stack.baseUrl, user.accessToken, from);
  expect(stream.status, stream.text).toBe(200);
  const ready = await stream.waitFor(isEvent("ready"), 10_000);
  return { stream, cursor: (ready as { id: string }).id };
}

/**
 * Opens a stream of a new user, makes 20 changes from another session of
 * theirs (creates, saves and a final delete: each kind wakes the stream), and
 * expects each event within 1 s of its write's answer (p95), where the poll
 * alone (every 2 s) would take about 2 s.
 */
export async function expectChangesWithinASecond(stack: Stack): Promise<void> {
  const user = await registerUser("stream-latency", { baseUrl: stack.baseUrl });
  const phone = await secondSession(stack, user);
  const { stream } = await openReady(stack, user);
  try {
    const latencies: number[] = [];
    let note: Note | undefined;
    for (let i = 0; i < 20; i++) {
      const from = stream.messages.length;
      if (!note) note = await create(stack, phone, `latency ${i}`);
      else if (i < 19) await save(stack, phone, note.id, `edit ${i}`);
      else await remove(stack, phone, note.id);
      const answeredAt = performance.now();
      const event = await stream.waitFor(isEvent("change"), 10_000, from);
      latencies.push(Math.max(0, event.at - answeredAt));
    }
    latencies.sort((a, b) => a - b);
    const p95 = latencies[Math.ceil(latencies.length * 0.95) - 1];
    expect(p95, `latencies (ms): ${latencies.map(Math.round).join(", ")}`).toBeLessThan(1_000);
    expect(stream.changes().at(-1)?.change).toEqual({ id: note?.id, deleted: true });
  } finally {
    stream.close();
  }
}
