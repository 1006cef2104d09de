import type { ComponentChildren, JSX } from 'preact';
import { useEffect, useState } from 'preact/hooks';

/**
 * A small history-API router. Each page family lives under one base path
 * (`/app`, `/console`); the server answers every path below it with the
 * page's index.html, so deep links and reloads work.
 */
let base = '';
const listeners = new Set<() => void>();

export function setBase(path: string): void {
  base = path.replace(/\/$/, '');
}

/** The current path below the base, always starting with `/`. */
export function currentPath(): string {
  const path = location.pathname.startsWith(base) ? location.pathname.slice(base.length) : location.pathname;
  return path === '' ? '/' : path;
}

export function navigate(path: string, options: { replace?: boolean } = {}): void {
  const url = base + path;
  if (options.replace) history.replaceState(null, '', url);
  else history.pushState(null, '', url);
  for (const listener of listeners) listener();
  // Land at the top of the new page, as a full navigation would.
  window.scrollTo(0, 0);
}

window.addEventListener('popstate', () => listeners.forEach((listener) => listener()));

export function useLocation(): { path: string; query: URLSearchParams } {
  const [, setTick] = useState(0);
  useEffect(() => {
    const listener = () => setTick((tick) => tick + 1);
    listeners.add(listener);
    return () => listeners.delete(listener);
  }, []);
  return { path: currentPath(), query: new URLSearchParams(location.search) };
}

export interface Route {
  /** `/packages/:packageId`: segments starting with `:` become params. */
  path: string;
  render: (params: Record<string, string>) => JSX.Element;
}

export function matchRoute(routes: Route[], path: string): { route: Route; params: Record<string, string> } | null {
  const segments = path.split('/').filter(Boolean);
  for (const route of routes) {
    const pattern = route.path.split('/').filter(Boolean);
    if (pattern.length !== segments.length) continue;
    const params: Record<string, string> = {};
    const matches = pattern.every((part, i) => {
      if (part.startsWith(':')) {
        params[part.slice(1)] = decodeURIComponent(segments[i]);
        return true;
      }
      return part === segments[i];
    });
    if (matches) return { route, params };
  }
  return null;
}

export function Link(props: { href: string; children: ComponentChildren; class?: string; 'aria-current'?: 'page' | undefined }) {
  const onClick = (event: MouseEvent) => {
    // Let the browser handle new-tab and modified clicks.
    if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    event.preventDefault();
    navigate(props.href);
  };
  return (
    <a href={base + props.href} onClick={onClick} class={props.class} aria-current={props['aria-current']}>
      {props.children}
    </a>
  );
}
