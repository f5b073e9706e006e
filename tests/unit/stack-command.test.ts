import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { stackDenoArgs } from "../../dev/stack-command.ts";

describe("the stack's command", () => {
  it("is npm start's, so the harness, the frontend check and the demo run the stack as a developer does", () => {
    const { scripts } = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8"));
    expect(scripts.start).toBe(["deno", ...stackDenoArgs].join(" "));
  });
});
