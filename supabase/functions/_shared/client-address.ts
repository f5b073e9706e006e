/**
 * The client's network address, for the per-address limits. Behind proxies
 * every connection comes from the nearest proxy, so the address is read from
 * `x-forwarded-for`, but only when `TRUST_PROXY` says trusted proxies stand in
 * front, and only the entry the nearest trusted proxy appended: the entries to
 * its left are whatever the client chose to send.
 *
 * Where no trustworthy address exists (no trusted proxy, and a peer address
 * that is unknown or unspecified, as on Supabase's edge runtime where every
 * caller is 0.0.0.0), the answer is undefined and the per-address limits are
 * skipped, with one warning per isolate: pooling every caller into one bucket
 * would let anyone lock everyone out.
 *
 * @example
 * ```ts
 * const address = clientAddress(req, info, getConfig().limits);
 * ```
 */

/** What the server knows about the connection (`Deno.ServeHandlerInfo`, reduced to what is used). */
export interface ConnectionInfo {
  remoteAddr: { transport: string; hostname?: string };
}

// Long enough for any IPv6 form; a longer "address" is junk and must not grow the limits' keys.
const maxAddressChars = 64;

const unspecifiedAddresses = new Set(["0.0.0.0", "::", ""]);

let warned = false;

function warnOnce(): void {
  if (warned) return;
  warned = true;
  console.warn(JSON.stringify({
    level: "warn",
    event: "no trustworthy client address: per-address limits are skipped (set TRUST_PROXY behind a proxy)",
  }));
}

/**
 * The client's address, or undefined when none can be trusted. With
 * `trustProxy`, the `trustedProxyHops`-th `x-forwarded-for` entry from the right.
 */
export function clientAddress(
  req: Request,
  info: ConnectionInfo | undefined,
  settings: { trustProxy: boolean; trustedProxyHops: number },
): string | undefined {
  if (settings.trustProxy) {
    // Several headers are one list, in order (RFC 9110, 5.3).
    const hops = (req.headers.get("x-forwarded-for") ?? "").split(",").map((hop) => hop.trim()).filter(Boolean);
    const appended = hops[hops.length - settings.trustedProxyHops];
    if (appended) return appended.slice(0, maxAddressChars);
  }
  const peer = info?.remoteAddr.hostname;
  if (peer === undefined || unspecifiedAddresses.has(peer)) {
    warnOnce();
    return undefined;
  }
  return peer.slice(0, maxAddressChars);
}
