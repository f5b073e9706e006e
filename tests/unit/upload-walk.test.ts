import { describe, expect, it } from "vitest";
import { uploadWalkSpecifiers } from "../../scripts/check-deploy/upload-walk.ts";

describe("uploadWalkSpecifiers", () => {
  it("finds what the Supabase CLI's deploy finds: static imports over several lines, re-exports, dynamic imports", () => {
    const source = [
      `import {`,
      `  a,`,
      `  b,`,
      `} from "./a.ts";`,
      `import type { C } from '../c.ts';`,
      `export { d } from "./d.ts";`,
      `const route = lazy(() => import("../route/handler.ts"));`,
      `const spaced = await import(  "./spaced.ts");`,
    ].join("\n");
    expect(uploadWalkSpecifiers(source)).toEqual(["./a.ts", "../c.ts", "./d.ts", "../route/handler.ts", "./spaced.ts"]);
  });

  it("misses a dynamic import whose specifier is not the whole of its parentheses, as the CLI does", () => {
    const source = [
      `const wrapped = await import(`,
      `  "../wrapped/handler.ts",`,
      `);`,
      "const computed = await import(`../${name}/handler.ts`);",
      `const closedLate = await import("./closed-late.ts" );`,
      // Go's \s is ASCII whitespace only: a no-break space is not one.
      `const spacedOddly = await import(\u00a0"./no-break-space.ts");`,
    ].join("\n");
    expect(uploadWalkSpecifiers(source)).toEqual([]);
  });
});
