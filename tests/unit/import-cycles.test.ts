/**
 * `npm run check:cycles` (part of `npm run check`) fails on an import cycle
 * and names its modules: here on a cycle planted beside the project's own
 * folders, one of whose imports is type-only, as the accounts/sessions circle
 * was.
 */
import { spawnSync } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";

const repoRoot = new URL("../../", import.meta.url).pathname;

/** Runs the project's cycle check over its own folders and `extra`, as npm passes arguments after `--`. */
function checkCycles(...extra: string[]) {
  const run = spawnSync("npm", ["run", "--silent", "check:cycles", "--", ...extra], {
    cwd: repoRoot,
    encoding: "utf8",
  });
  return { status: run.status, output: run.stdout + run.stderr };
}

describe("npm run check:cycles", () => {
  let planted: string;
  beforeEach(async () => {
    planted = await mkdtemp(join(tmpdir(), "planted-cycle-"));
  });
  afterEach(async () => {
    await rm(planted, { recursive: true, force: true });
  });

  it("fails on a cycle that a type-only import closes, naming both modules", async () => {
    await writeFile(
      join(planted, "session.ts"),
      'import type { Account } from "./accounts.ts";\nexport type S = Account;\n',
    );
    await writeFile(
      join(planted, "accounts.ts"),
      'import { grant } from "./session.ts";\nexport type Account = typeof grant;\n',
    );
    const { status, output } = checkCycles(planted);
    expect(status).not.toBe(0);
    expect(output).toMatch(/accounts\.ts > .*session\.ts|session\.ts > .*accounts\.ts/);
  }, 60_000);

  it("passes on the project's own folders and modules that import one way", async () => {
    await writeFile(
      join(planted, "session.ts"),
      'import type { Account } from "./accounts.ts";\nexport type S = Account;\n',
    );
    await writeFile(join(planted, "accounts.ts"), "export type Account = { id: string };\n");
    const { status, output } = checkCycles(planted);
    expect(output).toContain("No circular dependency found");
    expect(status).toBe(0);
  }, 60_000);
});
