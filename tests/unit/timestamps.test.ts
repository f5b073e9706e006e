import pg from "pg";
import { describe, expect, it } from "vitest";
import { isoTimestamp } from "../../supabase/functions/_shared/db/timestamps.ts";

/** What the functions answered before: node-postgres's Date, formatted by `toISOString`. */
const throughDate = (text: string) => (pg.types.getTypeParser(1184)(text) as Date).toISOString();

describe("isoTimestamp", () => {
  it.each([
    "2026-11-22 16:08:13.123456+00",
    "2026-11-22 16:08:13.999999+00",
    "2026-11-22 16:08:13.1+00",
    "2026-11-22 16:08:13.05+00",
    "2026-11-22 16:08:13+00",
    "0099-01-01 00:00:00+00",
    "2026-11-22 17:08:13.5+01",
    "2026-11-22 21:38:13.25+05:30",
    "2026-11-21 23:08:13.000001-17",
  ])("writes %s as a Date would", (text) => {
    expect(isoTimestamp(text)).toBe(throughDate(text));
  });

  it("truncates to the millisecond rather than rounding", () => {
    expect(isoTimestamp("2026-11-22 16:08:13.9996+00")).toBe("2026-11-22T16:08:13.999Z");
  });
});
