/**
 * The client's network address, for the per-address login limit. Behind a
 * proxy every connection comes from the proxy, so its `x-forwarded-for` is
 * believed, but only when `TRUST_PROXY` says one stands in front: otherwise a
 * client could name any address it likes and never be limited.
 *
 * @example
 * ```ts
 * const address = clientAddress(req, info, getConfig().limits.trustProxy);
 * ```
 */

/** What the server knows about the connection (`Deno.ServeHandlerInfo`, reduced to what is used). */
export interface ConnectionInfo {
  remoteAddr: { transport: string; hostname?: string };
}

/** The address used when none is known, so such requests share one budget rather than escape it. */
export const unknownAddress = "unknown";

// Long enough for any IPv6 form; a longer "address" is junk and must not grow the throttle table's keys.
const maxAddressChars = 64;

/** The first `x-forwarded-for` hop when the proxy is trusted, else the connection's peer address. */
export function clientAddress(req: Request, info: ConnectionInfo | undefined, trustProxy: boolean): string {
  if (trustProxy) {
    const first = req.headers.get("x-forwarded-for")?.split(",")[0]?.trim();
    if (first) return first.slice(0, maxAddressChars);
  }
  const remote = info?.remoteAddr;
  return remote && "hostname" in remote && remote.hostname ? remote.hostname : unknownAddress;
}
