/**
 * How the local stack is run: `deno run` with these arguments, from the
 * repository's root, as `npm start` does (package.json says the same; a unit
 * test keeps the two equal). The harness, the frontend check and the demo
 * start it this way too.
 *
 * The functions' JavaScript heap is held to the 256 MB the Supabase CLI's
 * local runtime (`memoryLimitMb` in its functions' main worker) and the
 * hosted platform give a function, so the stack collects garbage as soon as a
 * deployed function must: left to its default, V8 lets a heap that allocates
 * fast grow hundreds of megabytes past what it holds before it collects.
 *
 * @example
 * ```ts
 * spawn("deno", stackDenoArgs, { cwd: repoRoot });
 * ```
 */
export const stackHeapLimitMb = 256;

/** The flags `deno run` takes before the stack's script. */
export const stackDenoFlags = ["--allow-all", `--v8-flags=--max-old-space-size=${stackHeapLimitMb}`];

/** `deno`'s arguments that run the stack. */
export const stackDenoArgs = ["run", ...stackDenoFlags, "dev/stack.ts"];
