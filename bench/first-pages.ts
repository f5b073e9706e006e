/**
 * The first page of a 10-note user against the 20,000-note user, plain, by
 * status and searched, which shows whether a listing's cost grows with the
 * owner's notes.
 *
 * @example
 * ```ts
 * const costs = await measureFirstPages(stack.baseUrl, { apiKey, samples: 15, heavy });
 * ```
 */
import { median } from "./load.ts";
import { type Call, send } from "./requests.ts";
import { endpointCalls } from "./round-trips.ts";
import { searchWord } from "./seed.ts";

/** One listing's first page for the heavy user and for a 10-note user, sequential medians without delay. */
export interface FirstPageCost {
  /** What the page lists, e.g. "search for one word (10 notes match)". */
  listing: string;
  /** The listing's query string. */
  query: string;
  lightNotes: number;
  heavyNotes: number;
  lightMs: number;
  heavyMs: number;
  /** heavy / light. */
  ratio: number;
  /** The most `ratio` may be. */
  target: number;
}

/** The listings whose first page is compared, and how much slower the heavy user's may be. */
const comparedListings = [
  { listing: "every note", query: "limit=10&offset=0", target: 1.25 },
  { listing: "one status", query: "limit=10&status=DRAFT", target: 2 },
  { listing: "search for one word (10 notes match)", query: `limit=10&q=${searchWord}`, target: 2 },
];

/**
 * First-page latency of a new 10-note user against `heavy`, for each listing
 * (sequential requests alternating between the two, no delay). The light user's 10 notes are all drafts
 * and all hold the search word; 10 of the heavy user's 20,000 hold it.
 */
export async function measureFirstPages(
  baseUrl: string,
  options: { apiKey: string; samples: number; heavy: { authorization: string; notes: number } },
): Promise<FirstPageCost[]> {
  const { authorization, createCall } = await endpointCalls(baseUrl, options.apiKey);
  const lightNotes = 10;
  // The endpoint calls made one note already.
  for (let index = 1; index < lightNotes; index++) await send(baseUrl, createCall());
  const firstPage = (headers: Record<string, string>, query: string) => (): Call => ({
    path: `/notes-fetch?${query}`,
    method: "GET",
    headers,
    status: 200,
  });
  const heavyHeaders = { authorization: options.heavy.authorization };
  const costs: FirstPageCost[] = [];
  for (const { listing, query, target } of comparedListings) {
    const light = firstPage(authorization, query);
    const heavy = firstPage(heavyHeaders, query);
    for (let warmup = 0; warmup < 2; warmup++) {
      await send(baseUrl, light());
      await send(baseUrl, heavy());
    }
    // Request by request, alternately, so a burst of other load on the machine weighs on both alike; the ratio is
    // the median of each pair's.
    const lightMs: number[] = [];
    const heavyMs: number[] = [];
    const ratios: number[] = [];
    for (let pair = 0; pair < 3 * options.samples; pair++) {
      lightMs.push((await send(baseUrl, light())).ms);
      heavyMs.push((await send(baseUrl, heavy())).ms);
      ratios.push(heavyMs[pair] / lightMs[pair]);
    }
    costs.push({
      listing,
      query,
      lightNotes,
      heavyNotes: options.heavy.notes,
      lightMs: median(lightMs),
      heavyMs: median(heavyMs),
      ratio: median(ratios),
      target,
    });
  }
  return costs;
}
