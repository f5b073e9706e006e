import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { stackLog } from "../support/api.ts";

describe("stackLog", () => {
  const dir = mkdtempSync(join(tmpdir(), "stack-log-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("answers whole lines only: a line still being written waits for the next read", () => {
    const file = join(dir, "stack.log");
    const line = JSON.stringify({ level: "info", requestId: "a1", fn: "notes-fetch", status: 200 });
    writeFileSync(file, `${line}\n[mail] to someone\n${line.slice(0, 20)}`);
    expect(stackLog(file).split("\n").filter(Boolean).map((whole) => whole.startsWith("{") && JSON.parse(whole)))
      .toEqual([JSON.parse(line), false]);
    // The rest of the line arrives, and stderr's line after it.
    appendFileSync(file, `${line.slice(20)}\nWARNING: something\n`);
    expect(stackLog(file)).toBe(`${line}\n[mail] to someone\n${line}\nWARNING: something\n`);
  });
});
