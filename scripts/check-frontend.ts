/**
 * Tries the service as a frontend developer would, from folders outside the
 * repository, against a running `npm start` stack:
 *
 * 1. `npm pack ./shared` builds the client package (JavaScript and `.d.ts`),
 *    and every relative link in its packed Markdown (the README that app
 *    developers get with it) must resolve inside the package: the
 *    repository's `docs/` are not in the tarball.
 * 2. A plain Node ES module (`examples/frontend/node-app.mjs`, no TypeScript
 *    loader) installs the tarball and registers, creates and lists notes, and
 *    meets a 400 with its fields, a 401 with its code and an unreachable
 *    service; the same file then runs in Deno from the same `node_modules`.
 *    Beside it, `functions-client.mjs` makes the calls through
 *    `@supabase/functions-js`, which works on Node 20 where supabase-js does not.
 * 3. A stock Vite `vanilla-ts` app (`examples/frontend/vite-app`, the
 *    template's tsconfig unchanged) installs the tarball, generates types
 *    from `openapi.json` with openapi-typescript for its openapi-fetch
 *    recipe, and passes `tsc` and `vite build`.
 *
 * Packages come from npm's cache when `npm ci` has filled it (`--prefer-offline`).
 * Usage: `npm run check:frontend`; exits 1 on the first failure.
 */
import { type DenoChild, runCommand, startDeno } from "../dev/processes.ts";
import { stackDenoFlags } from "../dev/stack-command.ts";
import { checkLinks, markdownFiles } from "./check-links.ts";

const repoRoot = new URL("../", import.meta.url).pathname;
const examples = `${repoRoot}examples/frontend`;

/** Runs a command and answers its standard output; throws with all it printed when it fails. */
async function run(
  command: string,
  args: string[],
  options: { cwd: string; env?: Record<string, string> },
) {
  const { ok, stdout, stderr } = await runCommand(command, args, options);
  if (!ok) {
    throw new Error(
      `${command} ${args.join(" ")} (in ${options.cwd}) failed:\n${stdout}${stderr}`,
    );
  }
  return stdout;
}

/** Throws unless every pattern matches `output`. */
function expectLines(what: string, output: string, patterns: RegExp[]): void {
  const missing = patterns.filter((pattern) => !pattern.test(output));
  if (missing.length > 0) {
    throw new Error(
      `${what} did not print ${missing.join(", ")}; it printed:\n${output}`,
    );
  }
  console.log(`ok: ${what}`);
}

/** Unpacks `tarball` into `folder` and throws unless every relative link of its Markdown files resolves inside it. */
async function checkPackedLinks(tarball: string, folder: string): Promise<void> {
  await run("tar", ["-xzf", tarball, "-C", folder], { cwd: folder });
  // npm packs every file under `package/`.
  const root = `${folder}/package`;
  const files = await markdownFiles(root);
  const problems = await checkLinks(root, files, { within: "the package" });
  if (problems.length > 0) {
    throw new Error(
      `the packed client has links that do not resolve once installed:\n${
        problems.map(({ file, line, target, problem }) => `${file}:${line}: ${target} ${problem}`).join("\n")
      }`,
    );
  }
  console.log(`ok: every relative link in the packed ${files.join(", ")} resolves inside the package`);
}

const npmInstall = ["install", "--prefer-offline", "--no-audit", "--no-fund"];

async function checkNodeAndDeno(
  folder: string,
  tarball: string,
  url: string,
): Promise<void> {
  for (const file of ["node-app.mjs", "functions-client.mjs"]) {
    await Deno.copyFile(`${examples}/${file}`, `${folder}/${file}`);
  }
  await run("npm", [...npmInstall, tarball, "@supabase/functions-js"], {
    cwd: folder,
  });
  const expected = [
    /^registered node-\w+@example\.com; the token expires at \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/m,
    /^listed 1: Written from Node$/m,
    /^400 content: content must be at most 100000 characters$/m,
    /^401 not_signed_in Not signed in$/m,
    /^NotesApiError 0 The notes service could not be reached at http:\/\/127\.0\.0\.1:9$/m,
  ];
  const env = { NOTES_URL: url };
  const nodeVersion = (await run("node", ["--version"], { cwd: folder }))
    .trim();
  expectLines(
    `plain Node ${nodeVersion}`,
    await run("node", ["node-app.mjs"], { cwd: folder, env }),
    expected,
  );
  const deno = [
    "run",
    "--allow-net",
    "--allow-env",
    "--allow-read",
    "node-app.mjs",
  ];
  expectLines(
    "Deno",
    await run(Deno.execPath(), deno, { cwd: folder, env }),
    expected,
  );
  expectLines(
    `@supabase/functions-js on Node ${nodeVersion}`,
    await run("node", ["functions-client.mjs"], { cwd: folder, env }),
    [
      /^DRAFT From FunctionsClient$/m,
      /^400 At least one of title or content is required$/m,
    ],
  );
}

async function checkViteApp(folder: string, tarball: string): Promise<void> {
  await run("cp", ["-R", `${examples}/vite-app/.`, folder], { cwd: repoRoot });
  await run("npm", [...npmInstall, tarball], { cwd: folder });
  await run("npx", [
    "openapi-typescript",
    `${repoRoot}openapi.json`,
    "-o",
    "src/notes-api.d.ts",
  ], { cwd: folder });
  await run("npx", ["tsc"], { cwd: folder });
  console.log(
    "ok: tsc with the Vite vanilla-ts tsconfig (client package and openapi-fetch recipe)",
  );
  await run("npx", ["vite", "build"], { cwd: folder });
  const built = [...Deno.readDirSync(`${folder}/dist/assets`)].filter((entry) => entry.name.endsWith(".js"));
  if (built.length === 0) throw new Error("vite build wrote no JavaScript");
  console.log("ok: vite build");
}

const workspace = await Deno.makeTempDir({ prefix: "notes-frontend-" });
// Started inside the try, so a stack that does not start still has the workspace removed.
let stack: DenoChild | undefined;
try {
  stack = await startDeno(
    `${repoRoot}dev/stack.ts`,
    { PORT: "0", PGLITE_DATA_DIR: `${workspace}/pglite` },
    /Ready on (\S+)/,
    { cwd: repoRoot, flags: stackDenoFlags },
  );
  const packed = await run("npm", [
    "pack",
    "./shared",
    "--pack-destination",
    workspace,
  ], { cwd: repoRoot });
  const tarball = `${workspace}/${packed.trim().split("\n").at(-1)}`;
  console.log(
    `ok: npm pack ./shared -> ${tarball.slice(workspace.length + 1)}`,
  );
  for (const name of ["unpacked", "node-app", "vite-app"]) {
    await Deno.mkdir(`${workspace}/${name}`);
  }
  await checkPackedLinks(tarball, `${workspace}/unpacked`);
  await checkNodeAndDeno(`${workspace}/node-app`, tarball, stack.ready[1]);
  await checkViteApp(`${workspace}/vite-app`, tarball);
} catch (error) {
  console.error(error instanceof Error ? error.message : error);
  Deno.exitCode = 1;
} finally {
  await stack?.stop();
  await Deno.remove(workspace, { recursive: true });
}
