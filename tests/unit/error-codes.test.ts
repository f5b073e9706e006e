/**
 * The error codes are defined once (error-codes.ts), extended by the typed
 * client's own (errors.ts) and explained in docs/errors.md: the table there
 * must list exactly those codes, each with its status.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { errorCodes, errorStatuses } from "../../supabase/functions/_shared/contract/error-codes.ts";
import { clientErrorCodes } from "../../shared/errors.ts";

/** The code and status cells of each row of docs/errors.md's table, in order. */
function documentedCodes(): { code: string; status: string }[] {
  const text = readFileSync(new URL("../../docs/errors.md", import.meta.url), "utf8");
  return [...text.matchAll(/^\| `([a-z_]+)` +\| ([^|]+?) +\|/gm)].map(([, code, status]) => ({ code, status }));
}

describe("error codes", () => {
  it("are snake_case, and the client's own never reuse one of the API's", () => {
    for (const code of [...errorCodes, ...clientErrorCodes]) expect(code).toMatch(/^[a-z]+(_[a-z]+)*$/);
    expect(clientErrorCodes.filter((code) => (errorCodes as readonly string[]).includes(code))).toEqual([]);
  });

  it("are each explained in docs/errors.md, the API's with the status they come with", () => {
    const rows = documentedCodes();
    expect(rows.map((row) => row.code)).toEqual([...errorCodes, ...clientErrorCodes]);
    for (const { code, status } of rows) {
      if (code in errorStatuses) expect(status, code).toBe(String(errorStatuses[code as keyof typeof errorStatuses]));
    }
  });
});
