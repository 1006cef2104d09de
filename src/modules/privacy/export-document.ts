import type { SoulDto } from '../soul/dto/soul.dto';

export interface ExportProfile {
  id: string;
  name: string;
  email: string | null;
  created_at: string;
  tier: string;
}

/**
 * The export: fixed keys first, then one key per `@PersonalDataSection()`
 * (contacts, groups, messages, agent_actions, installs, …). `soul` is null
 * once the soul record was deleted.
 */
export interface SoulExportDocument {
  exported_at: string;
  format_version: number;
  profile: ExportProfile;
  soul: SoulDto | null;
  [section: string]: unknown;
}

const FIXED_KEYS = new Set(['exported_at', 'format_version', 'profile', 'soul']);

export function renderJson(document: SoulExportDocument): string {
  return `${JSON.stringify(document, null, 2)}\n`;
}

/**
 * A document for people to read (GDPR Art. 15 access, Art. 12 "intelligible
 * form"): one heading per section, a table per list of records. It holds the
 * same data as the JSON export; nested values appear as JSON text in their
 * cell. The JSON export is the machine-readable copy for Art. 20 portability.
 */
export function renderMarkdown(document: SoulExportDocument, exportId: string): string {
  const out: string[] = [];
  out.push('# Your personal data', '');
  out.push(
    `Exported ${document.exported_at} (UTC) · export ${exportId} · format version ${document.format_version}.`,
    '',
    'This is a readable copy of everything the service holds about you. To move your data to another service, ' +
      'request the `json` format: it has the same content in a machine-readable form.',
    '',
  );

  out.push('## Profile', '', ...keyValueTable(document.profile as unknown as Record<string, unknown>), '');

  out.push('## Soul record', '');
  const soul = document.soul;
  if (!soul) {
    out.push('_No soul record: it was deleted._', '');
  } else {
    out.push(...keyValueTable({ ...soul.traits }, 'Trait'), '');
    out.push(`**Values:** ${soul.values.length ? soul.values.map(cellText).join(', ') : '_none_'}`, '');
    out.push(`Record ${cellText(soul.id)}, last updated ${cellText(soul.updated_at)}.`, '');
  }

  for (const key of Object.keys(document)) {
    if (FIXED_KEYS.has(key)) continue;
    const value = document[key];
    const count = Array.isArray(value) ? ` (${value.length})` : '';
    out.push(`## ${heading(key)}${count}`, '', ...block(value, 3), '');
  }
  return `${out.join('\n').trimEnd()}\n`;
}

/** `agent_actions` → `Agent actions`. */
function heading(key: string): string {
  const words = key.replace(/_/g, ' ');
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/**
 * A section's content. A section made of lists (messages: `sent` and
 * `received`) gets a sub-heading and a table per list, not one cell of JSON.
 */
function block(value: unknown, level: number): string[] {
  if (value === null || value === undefined) return ['_Nothing stored._'];
  if (Array.isArray(value)) {
    if (value.length === 0) return ['_None._'];
    if (value.every(isPlainObject)) return recordTable(value);
    return value.map((item) => `- ${cellText(item)}`);
  }
  if (isPlainObject(value)) {
    const entries = Object.entries(value);
    if (entries.length === 0) return ['_None._'];
    if (level <= 4 && entries.some(([, v]) => Array.isArray(v) || isPlainObject(v))) {
      return entries.flatMap(([k, v]) => {
        const count = Array.isArray(v) ? ` (${v.length})` : '';
        return [`${'#'.repeat(level)} ${heading(k)}${count}`, '', ...block(v, level + 1), ''];
      });
    }
    return keyValueTable(value);
  }
  return [cellText(value)];
}

/** One row per record; columns are every key seen, in first-seen order. */
function recordTable(records: Array<Record<string, unknown>>): string[] {
  const columns: string[] = [];
  for (const record of records) for (const key of Object.keys(record)) if (!columns.includes(key)) columns.push(key);
  return [
    `| ${columns.map(cellText).join(' | ')} |`,
    `|${columns.map(() => '---').join('|')}|`,
    ...records.map((record) => `| ${columns.map((c) => (c in record ? cellText(record[c]) : '')).join(' | ')} |`),
  ];
}

function keyValueTable(record: Record<string, unknown>, label = 'Field'): string[] {
  return [`| ${label} | Value |`, '|---|---|', ...Object.entries(record).map(([k, v]) => `| ${cellText(k)} | ${cellText(v)} |`)];
}

/**
 * One value as inline Markdown text. The content is the user's own data but
 * may come from others (messages, contact names): characters that would end a
 * table cell, open a link or HTML, or start code are escaped, so the document
 * renders as plain text in any viewer.
 */
function cellText(value: unknown): string {
  if (value === null || value === undefined) return '—';
  const text =
    typeof value === 'string'
      ? value
      : typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint'
        ? String(value)
        : (JSON.stringify(value) ?? '');
  return text
    .replace(/[\\`|<>[\]*]/g, (c) => `\\${c}`)
    .replace(/\r\n|\r|\n/g, '<br>')
    .replace(/\t/g, ' ');
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
