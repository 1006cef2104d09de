/** Deepest nesting a request body may have; deeper JSON is refused with 400 before any recursive code sees it. */
export const MAX_BODY_DEPTH = 64;

/** True when `value` nests arrays/objects deeper than `limit` (iterative, so it cannot overflow the stack itself). */
export function nestedDeeperThan(value: unknown, limit: number): boolean {
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length > 0) {
    const [current, depth] = stack.pop()!;
    if (current === null || typeof current !== 'object') continue;
    if (depth > limit) return true;
    for (const child of Object.values(current as Record<string, unknown>)) {
      if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
    }
  }
  return false;
}

/** A body nested too deeply, raised from a Fastify hook; the error filter renders it in the path's envelope. */
export class BodyTooDeepError extends Error {
  readonly statusCode = 400;
  readonly code = 'BODY_TOO_DEEP';
  constructor() {
    super(`Request body is nested more than ${MAX_BODY_DEPTH} levels deep`);
  }
}
