import type { ComponentChildren } from 'preact';

/**
 * Message text with its web addresses as links. The text is never parsed as
 * HTML: it is split into strings and anchors that Preact renders as text
 * nodes and elements. Only `http:` and `https:` addresses become links (no
 * `javascript:`, `data:` or relative ones), opened in a new tab without an
 * opener, a referrer or the page's endorsement.
 */
const URL_PATTERN = /\bhttps?:\/\/[^\s<>"'`]+/gi;
// Punctuation that usually ends the sentence, not the address.
const TRAILING = /[.,;:!?)\]}'"»]+$/;

export function safeHref(candidate: string): string | null {
  try {
    const url = new URL(candidate);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.href : null;
  } catch {
    return null;
  }
}

export function MessageText(props: { text: string }) {
  const parts: ComponentChildren[] = [];
  let last = 0;
  for (const match of props.text.matchAll(URL_PATTERN)) {
    const start = match.index ?? 0;
    let raw = match[0];
    const trailing = TRAILING.exec(raw);
    // Keep a closing bracket that belongs to the address (Wikipedia style), drop one that closes the sentence.
    if (trailing && !(trailing[0] === ')' && raw.includes('('))) raw = raw.slice(0, raw.length - trailing[0].length);
    const href = safeHref(raw);
    if (!href) continue;
    if (start > last) parts.push(props.text.slice(last, start));
    parts.push(
      <a key={start} href={href} target="_blank" rel="noopener noreferrer nofollow">
        {raw}
      </a>,
    );
    last = start + raw.length;
  }
  if (last < props.text.length) parts.push(props.text.slice(last));
  return <>{parts}</>;
}
