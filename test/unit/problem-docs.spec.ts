import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { API_ERROR_STATUS } from '../../src/common/errors/api-error';
import { API_ERROR_DOCS, PROBLEM_DOCS } from '../../src/common/errors/problem-docs';
import { PROBLEM_TYPES } from '../../src/common/errors/problem-error';
import { OPERATOR_PAGES, PROVIDER_PAGES } from '../../src/modules/developer-docs/docs-pages';
import { DocsRenderer, slugify } from '../../src/modules/developer-docs/docs-renderer';

/** Ids of the headings of a rendered page. */
const ids = (html: string) => [...html.matchAll(/<h[1-6] id="([^"]+)"/g)].map((m) => m[1]);

describe('error reference', () => {
  const renderer = new DocsRenderer();
  const errors = renderer.page('errors')!.html;

  it.each(Object.keys(PROBLEM_TYPES))('documents the problem type %s: meaning, when, retry', (code) => {
    const doc = PROBLEM_DOCS[code as keyof typeof PROBLEM_DOCS];
    expect(doc).toBeDefined();
    for (const part of [doc.meaning, doc.when, doc.retry]) expect(part.trim().length).toBeGreaterThan(3);
  });

  it('has no entry for a code the service does not have', () => {
    expect(Object.keys(PROBLEM_DOCS).sort()).toEqual(Object.keys(PROBLEM_TYPES).sort());
    expect(Object.keys(API_ERROR_DOCS).sort()).toEqual(Object.keys(API_ERROR_STATUS).sort());
  });

  it('gives every problem type and user API code an anchor named exactly after it, once', () => {
    const anchors = ids(errors);
    for (const code of [...Object.keys(PROBLEM_TYPES), ...Object.keys(API_ERROR_STATUS)]) {
      expect(anchors.filter((id) => id === code)).toEqual([code]);
    }
    expect(new Set(anchors).size).toBe(anchors.length);
  });

  it('shows the status and title of each problem type in its entry', () => {
    for (const [code, { status, title }] of Object.entries(PROBLEM_TYPES)) {
      const at = errors.indexOf(`id="${code}"`);
      const next = errors.indexOf('<h3', at + 1);
      expect(errors.slice(at, next === -1 ? undefined : next)).toContain(`${status} ${title}`);
    }
  });
});

describe('docs renderer', () => {
  const renderer = new DocsRenderer();

  it('renders every listed page with one h1, lang, landmarks, a skip link and the nav', () => {
    for (const slug of ['', ...PROVIDER_PAGES.map((p) => p.slug), ...OPERATOR_PAGES.map((p) => p.slug)]) {
      const html = renderer.page(slug)?.html;
      expect({ slug, rendered: html !== undefined }).toEqual({ slug, rendered: true });
      expect(html).toContain('<html lang="en">');
      expect(html!.match(/<h1[\s>]/g)).toHaveLength(1);
      expect(html).toContain('<a class="skip-link" href="#main">');
      expect(html).toContain('<main id="main" tabindex="-1">');
      expect(html).toContain('<nav aria-label="Developer docs">');
    }
  });

  it('escapes raw HTML and drops links to pages that are not served', () => {
    const dir = mkdtempSync(join(tmpdir(), 'docs-'));
    writeFileSync(
      `${dir}/quickstart.md`,
      '# Hostile\n\n<script>alert(1)</script> <img src=x onerror=alert(1)>\n\n[decisions](decisions.md) [hooks](webhooks.md#retries) [js](javascript:alert(1))\n\n![pic](img/x.svg)\n',
    );
    const html = new DocsRenderer(dir).page('quickstart')!.html;
    expect(html).not.toMatch(/<script|<img|onerror=alert\(1\)>|href="javascript:/);
    expect(html).toContain('&lt;script&gt;');
    expect(html).toContain('<a href="/developers/webhooks#retries">hooks</a>');
    expect(html).toContain('decisions');
    expect(html).not.toContain('href="decisions.md"');
  });

  it('serves only known slugs', () => {
    for (const slug of [
      'decisions',
      'performance',
      'testing',
      '../package',
      '..%2fpackage.json',
      'constructor',
      '__proto__',
      'errors.md',
    ]) {
      expect(renderer.page(slug)).toBeUndefined();
    }
  });

  it('keeps code-like headings as they are and joins words with dashes', () => {
    expect(slugify('invalid_schema')).toBe('invalid_schema');
    expect(slugify('NOT_FOUND')).toBe('NOT_FOUND');
    expect(slugify('How versions reach installs')).toBe('how-versions-reach-installs');
  });
});
