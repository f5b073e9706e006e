/**
 * The client's network address, for the per-address limits, as the key it is
 * limited under (`addressBucket`: IPv6 by its /64). In order of trust:
 *
 * - `CLIENT_ADDRESS_HEADER`: a header the platform's edge sets and overwrites
 *   with the caller's address (`cf-connecting-ip` on hosted Supabase, whose
 *   front is Cloudflare). A caller cannot forge it there, so it is used alone.
 * - `TRUST_PROXY`: behind proxies of one's own every connection comes from the
 *   nearest proxy, so the address is the `x-forwarded-for` entry the nearest
 *   trusted proxy appended: the entries to its left are whatever the client
 *   chose to send.
 * - The connection's peer.
 *
 * Where no trustworthy address exists (an unknown or unspecified peer, as on
 * Supabase's edge runtime where every caller is 0.0.0.0, or a value that is no
 * IP address), the answer is undefined and the per-address limits are skipped,
 * with one warning per isolate: pooling every caller into one bucket would let
 * anyone lock everyone out.
 *
 * Beside it, `userAgentOf`: the device as the client names it, kept with its
 * sessions and security events.
 *
 * @example
 * ```ts
 * const address = clientAddress(req, info, getConfig().limits);
 * ```
 */
import { addressBucket } from "./address-bucket.ts";

/** What the server knows about the connection (`Deno.ServeHandlerInfo`, reduced to what is used). */
export interface ConnectionInfo {
  remoteAddr: { transport: string; hostname?: string };
}

let warned = false;

function warnOnce(): void {
  if (warned) return;
  warned = true;
  console.warn(JSON.stringify({
    level: "warn",
    event:
      "no trustworthy client address: per-address limits are skipped (set CLIENT_ADDRESS_HEADER, or TRUST_PROXY behind a proxy)",
  }));
}

/** The settings that say where the address comes from (`SecurityLimits`' fields of the same names). */
export interface AddressSource {
  clientAddressHeader: string | undefined;
  trustProxy: boolean;
  trustedProxyHops: number;
}

function claimedAddress(req: Request, info: ConnectionInfo | undefined, source: AddressSource): string | undefined {
  if (source.clientAddressHeader) return req.headers.get(source.clientAddressHeader) ?? undefined;
  if (source.trustProxy) {
    // Several headers are one list, in order (RFC 9110, 5.3).
    const hops = (req.headers.get("x-forwarded-for") ?? "").split(",").map((hop) => hop.trim()).filter(Boolean);
    const appended = hops[hops.length - source.trustedProxyHops];
    if (appended) return appended;
  }
  return info?.remoteAddr.hostname;
}

/** The key the client's address is limited under, or undefined when no address can be trusted. */
export function clientAddress(
  req: Request,
  info: ConnectionInfo | undefined,
  source: AddressSource,
): string | undefined {
  const claimed = claimedAddress(req, info, source);
  const bucket = claimed === undefined ? undefined : addressBucket(claimed);
  if (bucket === undefined) {
    warnOnce();
    return undefined;
  }
  return bucket;
}

/** The request's `User-Agent`, cut to the 256 characters the database keeps, or undefined when it sent none. */
export function userAgentOf(req: Request): string | undefined {
  return req.headers.get("user-agent")?.slice(0, 256) || undefined;
}
