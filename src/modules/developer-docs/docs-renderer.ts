import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import MarkdownIt from 'markdown-it';
import anchor from 'markdown-it-anchor';
import { errorReferenceMarkdown } from '../../common/errors/problem-docs';
import { DOCS_BASE, DocsPage, OPERATOR_PAGES, PROVIDER_PAGES } from './docs-pages';

/** docs/ at the repository root: three levels up from src/modules/developer-docs and from dist/modules/developer-docs. */
export const DOCS_DIR = join(__dirname, '..', '..', '..', 'docs');

/** A rendered page, kept in memory: the body never depends on the request. */
export interface RenderedPage {
  title: string;
  html: string;
}

/**
 * Heading ids: an identifier-like heading (an error code such as `invalid_schema` or `NOT_FOUND`) keeps its exact
 * spelling, so `errors#<code>` lands on it; other headings become lower-case words joined by dashes.
 */
export function slugify(text: string): string {
  const trimmed = text.trim();
  if (/^[a-z0-9_]+$/.test(trimmed) || /^[A-Z0-9_]+$/.test(trimmed)) return trimmed;
  return (
    trimmed
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .trim()
      .replace(/\s+/g, '-') || 'section'
  );
}

const escapeHtml = (text: string): string =>
  text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');

/**
 * The developer docs, rendered once from the Markdown in docs/ with markdown-it. Raw HTML in the Markdown is
 * escaped (`html: false`), links between served pages point at their routes, links to pages that are not served
 * (internal notes, source files) become plain text, and every page gets the same small accessible layout.
 */
export class DocsRenderer {
  private readonly pages = new Map<string, RenderedPage>();
  /** The SVG pictures of docs/img, by file name: read once, served at `/developers/img/<name>`. */
  private readonly images = new Map<string, string>();
  private readonly served = new Set([...PROVIDER_PAGES, ...OPERATOR_PAGES].map((p) => p.slug));

  constructor(private readonly dir: string = DOCS_DIR) {
    const images = join(dir, 'img');
    for (const name of existsSync(images) ? readdirSync(images) : []) {
      if (/^[a-z0-9-]+\.svg$/.test(name)) this.images.set(name, readFileSync(join(images, name), 'utf8'));
    }
    const md = this.markdown();
    for (const page of [...PROVIDER_PAGES, ...OPERATOR_PAGES]) {
      const source = this.source(page);
      if (source === null) continue;
      const title = /^#\s+(.+)$/m.exec(source)?.[1].trim() ?? page.label;
      this.pages.set(page.slug, { title, html: this.layout(title, md.render(source), page.slug) });
    }
    this.pages.set('', { title: 'Developer docs', html: this.layout('Developer docs', this.index(), '') });
  }

  /** The page for a slug (`''` is the index), or undefined for anything else: only known slugs are served. */
  page(slug: string): RenderedPage | undefined {
    return this.pages.get(slug);
  }

  /** An SVG picture of docs/img by file name, or undefined: only files read at start-up are served. */
  image(name: string): string | undefined {
    return this.images.get(name);
  }

  notFound(): string {
    return this.layout(
      'Page not found',
      `<h1>Page not found</h1><p>There is no such page in the developer docs. See the <a href="${DOCS_BASE}">list of pages</a>.</p>`,
      null,
    );
  }

  private source(page: DocsPage): string | null {
    const file = join(this.dir, `${page.slug}.md`);
    const text = existsSync(file) ? readFileSync(file, 'utf8') : null;
    // The error reference is generated from the code's own list of problem types (problem-docs.ts).
    if (page.slug === 'errors') return `${text ?? '# Errors\n'}\n${errorReferenceMarkdown()}`;
    return text;
  }

  private markdown() {
    const md = new MarkdownIt({ html: false, linkify: false, typographer: false });
    md.use(anchor, { slugify, tabIndex: false, permalink: anchor.permalink.headerLink({ safariReaderFix: true }) });
    md.core.ruler.push('docs_links', (state) => {
      for (const block of state.tokens) {
        // Links do not nest, but a stack costs nothing and needs no such assumption.
        const open: boolean[] = [];
        for (const token of block.children ?? []) {
          if (token.type === 'link_open') {
            const href = this.rewrite(String(token.attrGet('href') ?? ''));
            open.push(href === null);
            if (href === null) Object.assign(token, { type: 'text', tag: '', attrs: null, content: '' });
            else token.attrSet('href', href);
          } else if (token.type === 'link_close' && open.pop()) {
            Object.assign(token, { type: 'text', tag: '', content: '' });
          }
        }
      }
    });
    // Pictures of docs/img are served with the docs (`img/<name>.svg`); any other image shows its alternative text.
    md.renderer.rules.image = (tokens, idx) => {
      const token = tokens[idx];
      const name = /^(?:\.\/)?img\/([a-z0-9-]+\.svg)$/.exec(String(token.attrGet('src') ?? ''))?.[1];
      if (name === undefined || !this.images.has(name)) return escapeHtml(token.content);
      return `<img src="${DOCS_BASE}/img/${name}" alt="${escapeHtml(token.content)}">`;
    };
    return md;
  }

  /** A link's target on the served docs, or null to show its text only. */
  private rewrite(href: string): string | null {
    if (/^(https?:|mailto:)/i.test(href) || href.startsWith('#')) return href;
    if (href.startsWith('/')) return href;
    const match = /^(?:\.\/)?([a-z0-9-]+)\.md(#[^\s]*)?$/i.exec(href);
    if (match && this.served.has(match[1])) return `${DOCS_BASE}/${match[1]}${match[2] ?? ''}`;
    return null;
  }

  private index(): string {
    const list = (pages: DocsPage[]) =>
      `<ul class="index">${pages
        .map((p) => `<li><a href="${DOCS_BASE}/${p.slug}">${escapeHtml(p.label)}</a>: ${escapeHtml(p.summary)}</li>`)
        .join('')}</ul>`;
    return [
      '<h1>Developer docs</h1>',
      '<p>Build a package: a runtime that answers capability calls, described by capability descriptors, scored by conformance and reviewed before users can install it. Start with the quickstart.</p>',
      list(PROVIDER_PAGES),
      '<h2>API reference</h2>',
      '<p>Every route, request and answer: <a href="/docs">the OpenAPI reference</a> (<a href="/docs/openapi.json">JSON</a>). Manage apps and packages in <a href="/console/">the developer console</a>.</p>',
      '<h2>For operators</h2>',
      list(OPERATOR_PAGES),
    ].join('\n');
  }

  /** `current`: the slug shown as the current page in the nav (`''` the index, null none). */
  private layout(title: string, body: string, current: string | null): string {
    const nav = PROVIDER_PAGES.map((p) => {
      const here = p.slug === current ? ' aria-current="page"' : '';
      return `<li><a href="${DOCS_BASE}/${p.slug}"${here}>${escapeHtml(p.label)}</a></li>`;
    }).join('');
    return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} · Developer docs</title>
<link rel="stylesheet" href="${DOCS_BASE}/docs.css">
</head>
<body>
<a class="skip-link" href="#main">Skip to content</a>
<header class="topbar">
<a class="brand" href="${DOCS_BASE}"${current === '' ? ' aria-current="page"' : ''}>Developer docs</a>
<a href="/docs">API reference</a>
<a href="/console/">Console</a>
</header>
<div class="columns">
<nav aria-label="Developer docs"><ul>${nav}</ul></nav>
<main id="main" tabindex="-1">
${body}
</main>
</div>
</body>
</html>
`;
  }
}

/** The stylesheet of the docs pages (served as a file: the policy allows no inline style). */
export const DOCS_CSS = `
:root { color-scheme: light; --ink: #1a1a1a; --muted: #4a4a4a; --line: #d0d0d0; --accent: #0b57d0; --code: #f3f3f3; }
* { box-sizing: border-box; }
body { margin: 0; font: 16px/1.6 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--ink); background: #fff; }
a { color: var(--accent); }
a:focus-visible, main:focus-visible { outline: 3px solid #e37400; outline-offset: 2px; }
.skip-link { position: absolute; left: 8px; top: -40px; background: #fff; padding: 6px 10px; border: 2px solid var(--accent); z-index: 10; }
.skip-link:focus { top: 8px; }
.topbar { display: flex; flex-wrap: wrap; gap: 16px; align-items: center; padding: 12px 24px; border-bottom: 1px solid var(--line); }
.brand { font-weight: 700; margin-right: auto; color: var(--ink); text-decoration: none; }
.columns { display: flex; flex-wrap: wrap; gap: 32px; padding: 24px; max-width: 1200px; margin: 0 auto; }
nav { flex: 0 0 220px; }
nav ul { list-style: none; margin: 0; padding: 0; }
nav li { margin: 4px 0; }
nav a[aria-current="page"] { font-weight: 700; color: var(--ink); }
main { flex: 1 1 600px; min-width: 0; }
h1, h2, h3 { line-height: 1.25; scroll-margin-top: 16px; }
.header-anchor { color: inherit; text-decoration: none; }
.header-anchor:hover { text-decoration: underline; }
h3 .header-anchor { font-family: ui-monospace, monospace; }
code { font-family: ui-monospace, "SFMono-Regular", Menlo, monospace; font-size: 0.9em; background: var(--code); padding: 0 3px; overflow-wrap: anywhere; }
pre { background: var(--code); padding: 12px; white-space: pre-wrap; overflow-wrap: anywhere; }
pre code { padding: 0; }
img { max-width: 100%; height: auto; }
table { border-collapse: collapse; width: 100%; margin: 16px 0; }
th, td { border: 1px solid var(--line); padding: 6px 8px; text-align: left; vertical-align: top; overflow-wrap: anywhere; }
th { background: var(--code); }
blockquote { margin: 0; padding-left: 12px; border-left: 4px solid var(--line); color: var(--muted); }
`;
