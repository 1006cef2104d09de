import { useEffect, useRef } from 'preact/hooks';

/**
 * Calls `tick` every `intervalMs` while `active` (a run in progress, a delivery
 * still pending); stops by itself when the condition clears or the page goes away.
 */
export function usePoll(tick: () => void, active: boolean, intervalMs = 1000): void {
  const latest = useRef(tick);
  latest.current = tick;
  useEffect(() => {
    if (!active) return;
    const timer = setInterval(() => latest.current(), intervalMs);
    return () => clearInterval(timer);
  }, [active, intervalMs]);
}
