import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { checkStructure, importedSpecifiers, lineLimitOf } from "../../scripts/check-structure.ts";

describe("lineLimitOf", () => {
  it("gives _shared/ 350 lines, other source 600, and migrations and tests none", () => {
    expect(lineLimitOf("supabase/functions/_shared/queries/notes.ts")).toBe(350);
    expect(lineLimitOf("shared/client.ts")).toBe(600);
    expect(lineLimitOf("examples/web/src/style.css")).toBe(600);
    expect(lineLimitOf("supabase/migrations/20260101000000_init.sql")).toBeUndefined();
    expect(lineLimitOf("tests/client.test.ts")).toBeUndefined();
  });
});

describe("importedSpecifiers", () => {
  it("finds static imports over several lines, re-exports, side-effect and dynamic imports", () => {
    const source = [
      'import { a } from "./a.ts";',
      "import {",
      "  b,",
      "  type C,",
      '} from "../tests/support/b.ts";',
      'export { d } from "./d.ts";',
      'import "./side-effect.ts";',
      'const e = await import("../tests/e.ts");',
    ].join("\n");
    expect(importedSpecifiers(source).sort()).toEqual(
      ["../tests/e.ts", "../tests/support/b.ts", "./a.ts", "./d.ts", "./side-effect.ts"].sort(),
    );
  });
});

describe("checkStructure", () => {
  let root: string;
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), "structure-"));
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  const plant = async (file: string, text: string) => {
    await mkdir(dirname(join(root, file)), { recursive: true });
    await writeFile(join(root, file), text);
  };
  const lines = (count: number) => "const x = 1;\n".repeat(count);

  it("names a file over its limit and a tool that imports from tests/, and passes the rest", async () => {
    await plant("shared/long.ts", lines(601));
    await plant("shared/fits.ts", lines(600));
    await plant("supabase/functions/_shared/long.ts", lines(351));
    await plant("supabase/functions/_shared/fits.ts", lines(350));
    await plant("supabase/migrations/20260101000000_long.sql", lines(2000));
    await plant("tests/long.test.ts", lines(2000));
    await plant("bench/streams.ts", 'import { open } from "../tests/support/event-stream.ts";\n');
    await plant("scripts/fine.ts", 'import { x } from "../shared/fits.ts";\nimport { z } from "zod";\n');
    await plant("tests/support/event-stream.ts", 'import { x } from "../../shared/fits.ts";\n');

    const problems = await checkStructure(root);

    expect(problems.map(({ file }) => file).sort()).toEqual(
      ["bench/streams.ts", "shared/long.ts", "supabase/functions/_shared/long.ts"].sort(),
    );
    expect(problems.find(({ file }) => file === "shared/long.ts")?.problem).toMatch(/601 lines.*600/);
    expect(problems.find(({ file }) => file === "bench/streams.ts")?.problem).toMatch(/tests\//);
  });

  it("passes on this repository", async () => {
    const repository = fileURLToPath(new URL("../../", import.meta.url));
    expect(await checkStructure(repository)).toEqual([]);
  });
});
