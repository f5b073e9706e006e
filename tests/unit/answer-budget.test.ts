import { describe, expect, it } from "vitest";
import { authErrorEnvelope, notesErrorEnvelope } from "../../supabase/functions/_shared/contract/mod.ts";
import { authSuccess, notesSuccess } from "../../supabase/functions/_shared/http/envelopes.ts";

/** About 5 MiB of JSON: six of them fit in the 32 MiB budget, a seventh does not. */
const large = { content: "é".repeat(2 * 1024 * 1024) + "a".repeat(1024 * 1024) };
const largeBytes = Buffer.byteLength(JSON.stringify({ message: "Notes fetched", success: true, data: large }));

describe("the budget of large answers", () => {
  it("sends large answers whole while they fit, answers 503 in the envelope past it, and frees a share once read or dropped", async () => {
    const held = Array.from({ length: 6 }, () => notesSuccess(200, "Notes fetched", large));
    for (const response of held) {
      expect(response.status).toBe(200);
      expect(response.headers.get("content-length")).toBe(String(largeBytes));
    }

    const refused = notesSuccess(200, "Notes fetched", large);
    expect(refused.status).toBe(503);
    expect(refused.headers.get("retry-after")).toBe("1");
    expect(notesErrorEnvelope.strict().parse(await refused.json())).toMatchObject({ code: "service_unavailable" });
    const refusedAuth = authSuccess(200, "Events listed", large);
    expect(authErrorEnvelope.strict().parse(await refusedAuth.json())).toMatchObject({ statusCode: 503 });
    // A small answer never waits on the budget.
    expect(notesSuccess(200, "Notes fetched", { id: "n1" }).status).toBe(200);

    // Read to its end, an answer is whole and gives its share back.
    const text = await held.pop()!.text();
    expect(Buffer.byteLength(text)).toBe(largeBytes);
    expect(JSON.parse(text).data).toEqual(large);
    const afterRead = notesSuccess(200, "Notes fetched", large);
    expect(afterRead.status).toBe(200);

    // Dropped (the connection went away, so the server cancelled it), it gives its share back too.
    expect(notesSuccess(200, "Notes fetched", large).status).toBe(503);
    await held.pop()!.body!.cancel();
    expect(notesSuccess(200, "Notes fetched", large).status).toBe(200);
  });
});
