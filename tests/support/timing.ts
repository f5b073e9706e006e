/**
 * Whether a request tells a known address from an unknown one by its timing:
 * the share of pairs, one request for each kind, in which the known one took
 * longer. Near 0.5 when they do the same work; a leak shows as 0.7 and more.
 */

/** Times `pairs` pairs of `known(pair)` and `unknown(pair)`, alternating which goes first; answers P(known slower). */
export async function shareKnownSlower(
  pairs: number,
  known: (pair: number) => Promise<unknown>,
  unknown: (pair: number) => Promise<unknown>,
): Promise<number> {
  const timed = async (request: () => Promise<unknown>) => {
    const started = performance.now();
    await request();
    return performance.now() - started;
  };
  let knownSlower = 0;
  for (let pair = 0; pair < pairs; pair++) {
    // Alternating which goes first, so whatever the first request of a pair pays is paid by both kinds.
    const [knownMs, unknownMs] = pair % 2 === 0
      ? [await timed(() => known(pair)), await timed(() => unknown(pair))]
      : [await timed(() => unknown(pair)), await timed(() => known(pair))].reverse();
    if (knownMs > unknownMs) knownSlower++;
  }
  return knownSlower / pairs;
}
