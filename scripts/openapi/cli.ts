/**
 * `npm run openapi`: writes `openapi.json` from the contract.
 * `npm run openapi:check`: fails when the committed `openapi.json` differs
 * from what the contract generates, or when it is not a valid OpenAPI document.
 *
 * @example
 * ```sh
 * deno run --allow-read --allow-write=openapi.json scripts/openapi/cli.ts
 * deno run --allow-read scripts/openapi/cli.ts --check
 * ```
 */
import { buildOpenApiDocument } from "./document.ts";
import { validateOpenApiDocument } from "./validate.ts";

const file = new URL("../../openapi.json", import.meta.url);
const generated = `${JSON.stringify(buildOpenApiDocument(), null, 2)}\n`;

const problems = await validateOpenApiDocument(JSON.parse(generated));
if (problems.length > 0) {
  console.error(
    `The generated document is not valid OpenAPI:\n${problems.join("\n")}`,
  );
  Deno.exit(1);
}

if (Deno.args.includes("--check")) {
  const committed = await Deno.readTextFile(file).catch(() => "");
  if (committed !== generated) {
    console.error(
      "openapi.json is stale: run `npm run openapi` and commit the result.",
    );
    Deno.exit(1);
  }
  console.log(
    "openapi.json matches the contract and is a valid OpenAPI 3.1 document.",
  );
} else {
  await Deno.writeTextFile(file, generated);
  console.log("Wrote openapi.json (valid OpenAPI 3.1).");
}
