/**
 * Checks that every relative link in the repository's Markdown files resolves:
 * the file or folder it names exists inside the repository, and its `#anchor`
 * names a heading of the target (slugged as GitHub does) or an HTML `id`/`name`.
 * Links with a scheme (`https:`, `mailto:`) are not followed: no network.
 * Part of `npm run check`.
 *
 * @example
 * ```sh
 * deno run --allow-read scripts/check-links.ts
 * ```
 */
import { readFile, stat } from "node:fs/promises";
import { dirname, extname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { repositoryFiles } from "./repository-files.ts";

/** A link that does not resolve, where it is written and why. */
export interface LinkProblem {
  /** The Markdown file holding the link, relative to the checked root, with `/` separators. */
  file: string;
  /** 1-based line of the link. */
  line: number;
  /** The link's target as written. */
  target: string;
  problem: string;
}

/** A link found in a Markdown file. */
export interface MarkdownLink {
  target: string;
  line: number;
}

/**
 * The anchor GitHub gives a heading (github-slugger's rule): lower-cased, every
 * character that is not a letter, mark, number, `_`, `-` or space removed, spaces
 * turned into `-`.
 */
export function githubSlug(heading: string): string {
  return heading.toLowerCase().replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, "").replaceAll(" ", "-");
}

/** A heading's text as GitHub renders it: without code backticks, link targets, emphasis or HTML tags. */
function headingText(markdown: string): string {
  return markdown
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/<[^>]+>/g, "")
    .replace(/`+/g, "")
    .replace(/(\*\*|\*|~~)/g, "")
    .trim();
}

/** Whether `line` opens or closes a fenced code block; answers the fence, or undefined. */
function fenceOf(line: string): string | undefined {
  return /^\s*(`{3,}|~{3,})/.exec(line)?.[1];
}

/** The lines of `markdown` outside fenced code blocks, with their 1-based numbers. */
function proseLines(markdown: string): { text: string; line: number }[] {
  const lines: { text: string; line: number }[] = [];
  let fence: string | undefined;
  markdown.split(/\r?\n/).forEach((text, index) => {
    const marker = fenceOf(text);
    if (fence !== undefined) {
      if (
        marker !== undefined && marker[0] === fence[0] && marker.length >= fence.length &&
        !/\S/.test(text.trim().slice(marker.length))
      ) {
        fence = undefined;
      }
      return;
    }
    if (marker !== undefined) {
      fence = marker;
      return;
    }
    lines.push({ text, line: index + 1 });
  });
  return lines;
}

/** Every anchor a Markdown document offers: its headings' slugs (repeats numbered `-1`, `-2`, ...) and HTML ids. */
export function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  const addHeading = (text: string) => {
    const slug = githubSlug(headingText(text));
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  };
  const lines = proseLines(markdown);
  lines.forEach(({ text }, index) => {
    const atx = /^ {0,3}#{1,6}(?:\s+(.*?))?(?:\s+#+)?\s*$/.exec(text);
    if (atx) addHeading(atx[1] ?? "");
    const previous = lines[index - 1];
    if (
      /^ {0,3}(=+|-{2,})\s*$/.test(text) && previous && previous.line === lines[index].line - 1 &&
      /^ {0,3}[^\s#>|*\-+`]/.test(previous.text)
    ) {
      addHeading(previous.text);
    }
    for (const match of text.matchAll(/<[a-z][^>]*?\s(?:id|name)="([^"]+)"/gi)) anchors.add(match[1]);
  });
  return anchors;
}

/** Every link of a Markdown document outside code: inline links and images, reference definitions, HTML `href`/`src`. */
export function linksOf(markdown: string): MarkdownLink[] {
  const links: MarkdownLink[] = [];
  for (const { text, line } of proseLines(markdown)) {
    // Code spans hold no links: blank them out, keeping the columns.
    const prose = text.replace(/(`+)[^`]*?\1/g, (span) => " ".repeat(span.length));
    for (const match of prose.matchAll(/\[(?:[^[\]]|\[[^\]]*\])*\]\(\s*(?:<([^>]*)>|([^\s)]+))(?:\s+"[^"]*")?\s*\)/g)) {
      links.push({ target: match[1] ?? match[2], line });
    }
    const definition = /^ {0,3}\[[^\]]+\]:\s*(?:<([^>]*)>|(\S+))/.exec(prose);
    if (definition) links.push({ target: definition[1] ?? definition[2], line });
    for (const match of prose.matchAll(/<[a-z][^>]*?\s(?:href|src)="([^"]*)"/gi)) {
      links.push({ target: match[1], line });
    }
  }
  return links;
}

/** Whether a link leaves the repository by its scheme (`https:`, `mailto:`) or host (`//host`): not checked. */
function isExternal(target: string): boolean {
  return /^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith("//");
}

/** What is at `path`: a file, a folder, or nothing. */
async function kindOf(path: string): Promise<"file" | "folder" | undefined> {
  try {
    return (await stat(path)).isDirectory() ? "folder" : "file";
  } catch {
    return undefined;
  }
}

/** The Markdown files under `root`, relative to it, skipping dependencies, build output and dot-folders. */
export function markdownFiles(root: string): Promise<string[]> {
  return repositoryFiles(root, (name) => extname(name).toLowerCase() === ".md");
}

/**
 * Checks every relative link of `files` (relative to `root`; by default every
 * Markdown file under it) and answers the ones that do not resolve. `within`
 * names `root` in the problems (a packed package rather than the repository).
 */
export async function checkLinks(
  root: string,
  files?: string[],
  { within = "the repository" }: { within?: string } = {},
): Promise<LinkProblem[]> {
  const base = resolve(root);
  const anchorCache = new Map<string, Set<string>>();
  const anchorsIn = async (path: string) => {
    let anchors = anchorCache.get(path);
    if (!anchors) {
      anchors = anchorsOf(await readFile(path, "utf8"));
      anchorCache.set(path, anchors);
    }
    return anchors;
  };
  const problems: LinkProblem[] = [];
  for (const file of files ?? await markdownFiles(base)) {
    const source = join(base, file);
    for (const { target, line } of linksOf(await readFile(source, "utf8"))) {
      if (isExternal(target)) continue;
      const report = (problem: string) => problems.push({ file: file.split(sep).join("/"), line, target, problem });
      const hash = target.indexOf("#");
      const pathPart = (hash === -1 ? target : target.slice(0, hash)).replace(/\?.*$/, "");
      const fragment = hash === -1 ? undefined : target.slice(hash + 1);
      let decodedPath: string;
      let decodedFragment: string | undefined;
      try {
        decodedPath = decodeURIComponent(pathPart);
        decodedFragment = fragment === undefined ? undefined : decodeURIComponent(fragment);
      } catch {
        report("is not a valid URL");
        continue;
      }
      const resolved = decodedPath === ""
        ? source
        : decodedPath.startsWith("/")
        ? join(base, decodedPath)
        : resolve(dirname(source), decodedPath);
      const inside = relative(base, resolved);
      if (inside.startsWith("..") || isAbsolute(inside)) {
        report(`points outside ${within}`);
        continue;
      }
      const kind = await kindOf(resolved);
      if (kind === undefined) {
        report(`names ${inside.split(sep).join("/")}, which does not exist`);
        continue;
      }
      if (decodedFragment === undefined || decodedFragment === "") continue;
      if (kind === "folder" || extname(resolved).toLowerCase() !== ".md") {
        // GitHub's line anchors are the only ones a file that is not Markdown has.
        if (kind === "file" && /^L\d+(-L\d+)?$/.test(decodedFragment)) continue;
        report(`has the anchor #${decodedFragment}, but ${inside.split(sep).join("/") || "."} has no headings`);
        continue;
      }
      if (!(await anchorsIn(resolved)).has(decodedFragment)) {
        report(`has the anchor #${decodedFragment}, which no heading of ${inside.split(sep).join("/")} gives`);
      }
    }
  }
  return problems;
}

if (import.meta.main) {
  const root = fileURLToPath(new URL("..", import.meta.url));
  const files = await markdownFiles(root);
  const problems = await checkLinks(root, files);
  for (const { file, line, target, problem } of problems) console.error(`${file}:${line}: ${target} ${problem}`);
  if (problems.length > 0) {
    console.error(`\n${problems.length} broken link(s) in the Markdown files.`);
    Deno.exit(1);
  }
  console.log(`Every relative link in ${files.length} Markdown files resolves.`);
}
