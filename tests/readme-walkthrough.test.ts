/**
 * The README's walk-through, as written: its shell block runs twice in a row
 * against a running stack (`PORT` exported, as the README says for a stack on
 * another port), and every step answers what its comment says.
 */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { describe, expect, inject, it } from "vitest";

/** The first `sh` block under the README's "Walk-through" heading. */
function walkthrough(): string {
  const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8");
  const section = readme.slice(readme.indexOf("\n## Walk-through\n"));
  const block = /```sh\n([\s\S]*?)```/.exec(section);
  if (!block) throw new Error("no sh block under the README's Walk-through");
  return block[1];
}

/** Runs the block in bash as a reader would paste it, stopping at the first command that fails. */
function runWalkthrough(): { status: number | null; lines: string[]; stderr: string } {
  const port = new URL(inject("baseUrl")).port;
  const run = spawnSync("bash", ["-e", "-o", "pipefail", "-c", walkthrough()], {
    env: { ...process.env, PORT: port },
    encoding: "utf8",
    timeout: 60_000,
  });
  return { status: run.status, lines: run.stdout.trim().split("\n"), stderr: run.stderr };
}

describe("the README's walk-through", () => {
  it.each([1, 2])("runs as written, run %i on the same stack", (_run) => {
    const { status, lines, stderr } = runWalkthrough();
    expect(status, stderr).toBe(0);
    const answers = lines.map((line) => JSON.parse(line));
    // Nothing the shell picked out of an answer was missing (it would print "undefined"), and nothing failed inside.
    expect(lines.join("\n")).not.toContain("undefined");
    expect(answers.map((answer) => answer.code)).not.toContain("internal_error");
    // What the comments promise, in order: Bob is refused Ada's note (save, delete), the second device's save
    // conflicts, the unknown parameter is named, the second delete finds nothing, the logged-out token is revoked;
    // the laptop read its user after the refresh, and the phone's session goes on.
    const codes = answers.filter((answer) => answer.success === false).map((answer) => answer.code);
    expect(codes).toEqual([
      "note_not_found",
      "note_not_found",
      "note_conflict",
      "invalid_request",
      "note_not_found",
      "token_revoked",
    ]);
    expect(answers.at(-4)).toMatchObject({ success: true, data: { payload: { name: "Ada" } } });
    expect(answers.at(-3)).toMatchObject({ success: true, data: { scope: "local", sessionsEnded: 1 } });
    expect(answers.at(-1)).toMatchObject({ success: true, data: { pagination: { limit: 1, total: 3 } } });
  }, 90_000);
});
