/** Formats of `POST /v1/soul/export`: `json` for portability, `markdown` for people (see docs/decisions.md). */
export const EXPORT_FORMATS = ['json', 'markdown'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

export const EXPORT_MEDIA: Record<ExportFormat, { contentType: string; extension: string }> = {
  json: { contentType: 'application/json; charset=utf-8', extension: 'json' },
  markdown: { contentType: 'text/markdown; charset=utf-8', extension: 'md' },
};

/** Version of the export document's shape; bumped when a field changes meaning or moves. */
export const EXPORT_FORMAT_VERSION = 1;

/** How long a requested export can be downloaded. */
export const EXPORT_LIFETIME_MS = 24 * 3600 * 1000;

/** `Retry-After` (seconds) while an export is still being built. */
export const EXPORT_RETRY_AFTER_SECONDS = 2;

export function isExportFormat(value: string): value is ExportFormat {
  return (EXPORT_FORMATS as readonly string[]).includes(value);
}
