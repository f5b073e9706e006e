/**
 * The order in which `npm test` starts its files. Vitest's own order puts the
 * slowest first when it remembers a run, and otherwise (a fresh clone, as in
 * CI) the largest first. Here the slowest files are often small ones that wait
 * on a stack of their own, for a timeout, an outage or a stream's end: started
 * last, they alone made the last half-minute of a run. Files that start stacks
 * of their own go first, each group in Vitest's order.
 */
import { readFileSync } from "node:fs";
import { BaseSequencer, type TestSpecification } from "vitest/node";

const startsAStack = /\bstart(Scratch)?Stack\(/;

export class StacksFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const ownStack = new Set(sorted.filter((file) => startsAStack.test(readFileSync(file.moduleId, "utf8"))));
    return [...sorted.filter((file) => ownStack.has(file)), ...sorted.filter((file) => !ownStack.has(file))];
  }
}
