/**
 * Only the benchmark's round trips (part of step 5 of `npm run bench`), on a fresh database without the seed: every
 * endpoint through a proxy that adds `BENCH_RTT_MS` (40) per round trip, in a few minutes instead of the whole
 * benchmark's twenty, for a change to what a request sends to Postgres.
 *
 * `npm run bench:round-trips`. DATABASE_URL names an empty database to migrate, or a fresh one on 127.0.0.1:5432 is
 * made and dropped.
 */
import {
  createScratchDatabase,
  sharedStackLimits,
  startStack,
  testAnonKey,
  testSecrets,
} from "../dev/harness/stack.ts";
import { migrate } from "../dev/migrate.ts";
import { startTcpProxy } from "../dev/harness/tcp-proxy.ts";
import { identityProviderForStack } from "../dev/harness/identity-provider.ts";
import { grantAdminRole, markVerified } from "./operator.ts";
import { measureRoundTrips, roundTripTable } from "./round-trips.ts";

const rttMs = Number(Deno.env.get("BENCH_RTT_MS") || 40);
const given = Deno.env.get("DATABASE_URL");
const scratch = given ? undefined : await createScratchDatabase("notes_round_trips");
const databaseUrl = given ?? scratch?.url ?? "";

try {
  await migrate(databaseUrl, () => {});
  const database = new URL(databaseUrl);
  const proxy = await startTcpProxy({ host: database.hostname, port: Number(database.port || 5432) });
  const appUrl = "http://127.0.0.1:5173/";
  const { provider: identityProvider, env: providerEnv } = await identityProviderForStack([appUrl]);
  const stack = await startStack({
    env: {
      ...testSecrets,
      SUPABASE_ANON_KEY: testAnonKey,
      ...sharedStackLimits,
      ...providerEnv,
      DATABASE_URL: proxy.route(databaseUrl),
    },
  });
  try {
    const rows = await measureRoundTrips(stack.baseUrl, proxy, {
      apiKey: testAnonKey,
      rttMs,
      samples: 15,
      grantAdmin: (email) => grantAdminRole(databaseUrl, email),
      verifyAddress: (email) => markVerified(databaseUrl, email),
      provider: { identityProvider, appUrl },
    });
    console.log(`## Round trips to Postgres per request (${rttMs} ms added per round trip)\n`);
    console.log(roundTripTable(rows, rttMs));
  } finally {
    await stack.stop();
    await identityProvider.stop();
    await proxy.close();
  }
} finally {
  await scratch?.drop();
}
