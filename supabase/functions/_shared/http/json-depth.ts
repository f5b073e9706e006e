/**
 * A bound on how deeply a JSON text nests, checked before it is parsed. No
 * request of the API nests more than two levels, but `JSON.parse` builds
 * whatever it is given: a 1 MiB body of 500,000 brackets costs a parse that
 * runs deep into the stack and a tree of half a million objects per request.
 * Counting brackets outside strings is one pass over the text.
 *
 * @example
 * ```ts
 * if (jsonDepthExceeds(text, maxJsonDepth)) throw new BadRequestError("Request body nests too deeply");
 * ```
 */

/** The deepest nesting a request body may have; the API's own bodies use 1. */
export const maxJsonDepth = 32;

const openBrace = 0x7b;
const openBracket = 0x5b;
const closeBrace = 0x7d;
const closeBracket = 0x5d;
const quote = 0x22;
const backslash = 0x5c;

/**
 * Whether `text` opens more than `maxDepth` objects or arrays inside one
 * another. Malformed text is left for the parser to refuse.
 */
export function jsonDepthExceeds(text: string, maxDepth: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const char = text.charCodeAt(i);
    if (inString) {
      if (char === backslash) i++;
      else if (char === quote) inString = false;
    } else if (char === quote) {
      inString = true;
    } else if (char === openBrace || char === openBracket) {
      if (++depth > maxDepth) return true;
    } else if (char === closeBrace || char === closeBracket) {
      depth--;
    }
  }
  return false;
}
