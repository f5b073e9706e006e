/**
 * The key a client address is limited under. An IPv4 address is its own key;
 * an IPv6 address is keyed by its /64 network, because one home or mobile
 * connection is handed a whole /64 (2^64 addresses), and keying each address
 * alone would give every such client unlimited fresh buckets.
 *
 * @example
 * ```ts
 * addressBucket("2001:db8:1:2:aaaa::1"); // "2001:db8:1:2::/64"
 * addressBucket("::ffff:192.0.2.7");      // "192.0.2.7"
 * addressBucket("0.0.0.0");               // undefined
 * ```
 */

const ipv4Pattern = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;
const hexGroupPattern = /^[0-9a-f]{1,4}$/;

/** The eight 16-bit groups of an IPv6 address (an IPv4 tail counts as two), or undefined if it is not one. */
function ipv6Groups(address: string): number[] | undefined {
  const halves = address.split("::");
  if (halves.length > 2) return undefined;
  const parse = (part: string): number[] | undefined => {
    if (part === "") return [];
    const groups: number[] = [];
    const pieces = part.split(":");
    for (const [index, piece] of pieces.entries()) {
      if (index === pieces.length - 1 && ipv4Pattern.test(piece)) {
        const [a, b, c, d] = piece.split(".").map(Number);
        groups.push((a << 8) | b, (c << 8) | d);
      } else if (hexGroupPattern.test(piece)) {
        groups.push(parseInt(piece, 16));
      } else {
        return undefined;
      }
    }
    return groups;
  };
  const head = parse(halves[0]);
  const tail = halves.length === 2 ? parse(halves[1]) : [];
  if (!head || !tail) return undefined;
  if (halves.length === 1) return head.length === 8 ? head : undefined;
  const missing = 8 - head.length - tail.length;
  return missing >= 1 ? [...head, ...new Array<number>(missing).fill(0), ...tail] : undefined;
}

/**
 * The limits' key for `address`: IPv4 as is, IPv6 as its /64. Undefined when it
 * is no IP address, or the unspecified one (0.0.0.0, ::), which names no client:
 * Supabase's edge runtime hands it to every handler as the peer.
 */
export function addressBucket(address: string): string | undefined {
  const text = address.trim().toLowerCase();
  if (ipv4Pattern.test(text)) return text === "0.0.0.0" ? undefined : text;
  // A zone ("%eth0") names the local interface, not the client.
  const groups = ipv6Groups(text.replace(/%.*$/, ""));
  if (!groups || groups.every((group) => group === 0)) return undefined;
  // IPv4-mapped (::ffff:a.b.c.d): the IPv4 client it stands for.
  if (groups.slice(0, 5).every((group) => group === 0) && groups[5] === 0xffff) {
    return [groups[6] >> 8, groups[6] & 0xff, groups[7] >> 8, groups[7] & 0xff].join(".");
  }
  return `${groups.slice(0, 4).map((group) => group.toString(16)).join(":")}::/64`;
}
