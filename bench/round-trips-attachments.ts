/**
 * Attachments' calls for the round-trip measurement: reserving, completing, listing, reading and deleting a file.
 * What each sample uses up (a note's room for 20 files, a reserved upload, a ready file) is made while the call is
 * built, before the timer starts. The object store is the stack's own, on its own port, past the delaying proxy, so
 * what is measured is the round trips to Postgres alone.
 *
 * @example
 * ```ts
 * const calls = await attachmentCalls(stack.baseUrl, authorization);
 * ```
 */
import { type Call, send } from "./requests.ts";

const png = Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]);

export function attachmentCalls(baseUrl: string, authorization: Record<string, string>) {
  let counter = 0;
  const freshNote = async () =>
    String(
      (await send(baseUrl, {
        path: "/notes-create",
        method: "POST",
        headers: authorization,
        body: { title: `Files ${counter++}` },
        status: 201,
      })).body.data?.id,
    );
  const reserveCall = async (): Promise<Call> => ({
    path: "/attachments-create",
    method: "POST",
    headers: authorization,
    body: { noteId: await freshNote(), name: "round-trip.png", type: "image/png", size: png.length },
    status: 201,
  });
  /** A reserved file whose bytes are in the store: what a completion finds. */
  const uploaded = async () => {
    const { data } = (await send(baseUrl, await reserveCall())).body;
    const { attachment, upload } = data as {
      attachment: { id: string };
      upload: { url: string; headers: Record<string, string> };
    };
    const put = await fetch(upload.url, { method: "PUT", headers: upload.headers, body: png });
    await put.body?.cancel();
    return attachment.id;
  };
  const completeCall = async (): Promise<Call> => ({
    path: "/attachments-complete",
    method: "POST",
    headers: authorization,
    body: { id: await uploaded() },
    status: 200,
  });
  const ready = async () => {
    const call = await completeCall();
    await send(baseUrl, call);
    return String((call.body as { id: string }).id);
  };
  return {
    "attachments-create": reserveCall,
    "attachments-complete": completeCall,
    "attachments-list": async () => ({
      path: `/attachments-list?noteId=${await freshNote()}`,
      method: "GET",
      headers: authorization,
      status: 200,
    }),
    "attachments-get": async () => ({
      path: `/attachments-get?id=${await ready()}`,
      method: "GET",
      headers: authorization,
      status: 200,
    }),
    "attachments-delete": async () => ({
      path: `/attachments-delete?id=${await ready()}`,
      method: "DELETE",
      headers: authorization,
      status: 200,
    }),
  } satisfies Record<string, () => Promise<Call>>;
}
