import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { anchorsOf, checkLinks, githubSlug, linksOf, markdownFiles } from "../../scripts/check-links.ts";

describe("githubSlug", () => {
  it("lower-cases, drops punctuation and joins words with hyphens, as GitHub does", () => {
    expect(githubSlug("Quick start")).toBe("quick-start");
    expect(githubSlug("Pushing the migrations: npm run db:push -- <postgres-url>")).toBe(
      "pushing-the-migrations-npm-run-dbpush----postgres-url",
    );
    expect(githubSlug("Types from OpenAPI: openapi-typescript and openapi-fetch")).toBe(
      "types-from-openapi-openapi-typescript-and-openapi-fetch",
    );
    expect(githubSlug("409 note_conflict, Crème & Straße")).toBe("409-note_conflict-crème--straße");
  });
});

describe("anchorsOf", () => {
  it("offers each heading's slug, numbers repeats, reads HTML ids, and skips code blocks", () => {
    const anchors = anchorsOf(
      [
        "# Notes `service`",
        "## Deploying: [mail](x.md)",
        "## Deploying: mail",
        "Setext heading",
        "---",
        '<a id="kept-here"></a>',
        "```sh",
        "# not a heading",
        "```",
      ].join("\n"),
    );
    expect([...anchors].sort()).toEqual(
      ["deploying-mail", "deploying-mail-1", "kept-here", "notes-service", "setext-heading"].sort(),
    );
  });
});

describe("linksOf", () => {
  it("finds inline links, images, reference definitions and HTML links, but none in code", () => {
    const links = linksOf(
      [
        "See [the API](docs/api.md#notes-api) and ![a picture](img/a.png).",
        "Not a link: `[x](nowhere.md)`.",
        "```md",
        "[y](nowhere-either.md)",
        "```",
        "[ref]: docs/deploying.md",
        '<a href="docs/security.md#limits">limits</a> and <https://example.com>',
      ].join("\n"),
    );
    expect(links).toEqual([
      { target: "docs/api.md#notes-api", line: 1 },
      { target: "img/a.png", line: 1 },
      { target: "docs/deploying.md", line: 6 },
      { target: "docs/security.md#limits", line: 7 },
    ]);
  });
});

describe("checkLinks", () => {
  let root: string;

  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), "check-links-"));
    await mkdir(join(root, "docs"));
    await mkdir(join(root, "node_modules", "some-package"), { recursive: true });
    await writeFile(
      join(root, "docs", "api.md"),
      "# API\n\n## Notes API\n\nBack to [the README](../README.md#start).\n",
    );
    await writeFile(join(root, "script.ts"), "export {};\n");
    // Never searched: a dependency's broken link is not the repository's.
    await writeFile(join(root, "node_modules", "some-package", "README.md"), "[gone](gone.md)\n");
  });

  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it("answers nothing when every file and anchor resolves", async () => {
    await writeFile(
      join(root, "README.md"),
      [
        "# Start",
        "[API](docs/api.md), [notes](docs/api.md#notes-api), [here](#start), [folder](docs/),",
        "[a script](script.ts), [line 1](script.ts#L1), [site](https://example.com/missing.md#nowhere).",
      ].join("\n"),
    );
    expect(await markdownFiles(root)).toEqual(["README.md", "docs/api.md"]);
    expect(await checkLinks(root)).toEqual([]);
  });

  it("reports a link to a missing file and an anchor no heading gives", async () => {
    await writeFile(
      join(root, "README.md"),
      ["# Start", "", "[missing](docs/deploying.md) and [bad anchor](docs/api.md#accounts-api)"].join("\n"),
    );
    expect(await checkLinks(root)).toEqual([
      {
        file: "README.md",
        line: 3,
        target: "docs/deploying.md",
        problem: "names docs/deploying.md, which does not exist",
      },
      {
        file: "README.md",
        line: 3,
        target: "docs/api.md#accounts-api",
        problem: "has the anchor #accounts-api, which no heading of docs/api.md gives",
      },
    ]);
  });

  it("reports an anchor missing from the same file and a link out of the repository", async () => {
    await writeFile(join(root, "README.md"), "# Start\n\n[here](#nowhere)\n[out](../elsewhere.md)\n");
    expect((await checkLinks(root)).map(({ line, problem }) => `${line}: ${problem}`)).toEqual([
      "3: has the anchor #nowhere, which no heading of README.md gives",
      "4: points outside the repository",
    ]);
  });

  it("names the folder it checks, e.g. a packed package, for a link that leaves it", async () => {
    await writeFile(join(root, "README.md"), "[docs](../docs/api.md)\n");
    expect(await checkLinks(root, ["README.md"], { within: "the package" })).toEqual([
      { file: "README.md", line: 1, target: "../docs/api.md", problem: "points outside the package" },
    ]);
  });
});
