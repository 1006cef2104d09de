import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The repository's example packages (docs/examples/<mode>/package.json): what the docs tell providers to start from. */
export const EXAMPLES_DIR = join(__dirname, '..', '..', '..', 'docs', 'examples');

export interface ExamplePackage {
  mode: string;
  body: { riskTier: string; capabilities: unknown[] } & Record<string, unknown>;
}

export function examplePackages(): ExamplePackage[] {
  return readdirSync(EXAMPLES_DIR, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .flatMap((entry) => {
      const file = join(EXAMPLES_DIR, entry.name, 'package.json');
      try {
        return [{ mode: entry.name, body: JSON.parse(readFileSync(file, 'utf8')) as ExamplePackage['body'] }];
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
        throw error;
      }
    });
}
