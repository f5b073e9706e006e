import { describe, expect, it } from "vitest";
import { addressBucket } from "../../supabase/functions/_shared/http/address-bucket.ts";

describe("addressBucket", () => {
  it("keeps an IPv4 address as it is, also when it comes IPv4-mapped", () => {
    expect(addressBucket("192.0.2.7")).toBe("192.0.2.7");
    expect(addressBucket(" 192.0.2.7 ")).toBe("192.0.2.7");
    expect(addressBucket("::ffff:192.0.2.7")).toBe("192.0.2.7");
  });

  it("keys an IPv6 address by its /64, however it is written", () => {
    const bucket = "2001:db8:0:1::/64";
    for (
      const address of [
        "2001:db8:0:1::1",
        "2001:DB8::1:ffff:ffff:ffff:ffff",
        "2001:0db8:0000:0001:0:0:0:2",
        "2001:db8:0:1::192.0.2.1",
      ]
    ) {
      expect(addressBucket(address), address).toBe(bucket);
    }
    expect(addressBucket("fe80::1%eth0")).toBe("fe80:0:0:0::/64");
    expect(addressBucket("2001:db8:0:2::1")).not.toBe(bucket);
  });

  it("answers undefined for what is no client's address", () => {
    for (
      const junk of [
        "",
        "0.0.0.0",
        "::",
        "unknown",
        "256.1.1.1",
        "1.2.3",
        "1::2::3",
        "1:2:3:4:5:6:7:8:9",
        "12345::",
        "1.2.3.4:80",
      ]
    ) {
      expect(addressBucket(junk), junk).toBeUndefined();
    }
  });
});
