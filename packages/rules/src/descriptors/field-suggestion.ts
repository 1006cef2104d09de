import { distance } from 'fastest-levenshtein';

/**
 * The known name an unknown field most likely meant: the same name in another
 * case (`responseschema` → `responseSchema`), else the nearest by edit distance
 * when it is close enough to be a typo (at most a third of the longer name, and
 * at least 2 edits allowed), else none. Ties go to the first candidate, so the
 * order of the schema's fields decides.
 */
export function nearestName(unknown: string, candidates: readonly string[]): string | undefined {
  const folded = unknown.toLowerCase();
  const sameLetters = candidates.find((c) => c.toLowerCase() === folded);
  if (sameLetters !== undefined) return sameLetters;
  let best: { name: string; edits: number } | undefined;
  for (const candidate of candidates) {
    const edits = distance(folded, candidate.toLowerCase());
    if (best === undefined || edits < best.edits) best = { name: candidate, edits };
  }
  if (best === undefined) return undefined;
  const allowed = Math.max(2, Math.floor(Math.max(unknown.length, best.name.length) / 3));
  return best.edits <= allowed ? best.name : undefined;
}
