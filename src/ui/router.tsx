import type { ComponentChildren, JSX } from 'preact';
import { useEffect, useState } from 'preact/hooks';

/** Addresses people share and bookmark: /runs, /runs/<run id>, /handlers, /schedules, /workflows. */

const listeners = new Set<() => void>();

export function navigate(href: string, replace = false): void {
  if (replace) history.replaceState(null, '', href);
  else history.pushState(null, '', href);
  for (const listener of listeners) listener();
  if (!replace) window.scrollTo(0, 0);
}

window.addEventListener('popstate', () => {
  for (const listener of listeners) listener();
});

export interface Location {
  path: string;
  query: URLSearchParams;
}

export function useLocation(): Location {
  const read = (): Location => ({ path: location.pathname, query: new URLSearchParams(location.search) });
  const [current, setCurrent] = useState(read);
  useEffect(() => {
    const listener = () => setCurrent(read());
    listeners.add(listener);
    return () => void listeners.delete(listener);
  }, []);
  return current;
}

/** A link that changes the page without reloading it; a modified click opens a tab as any link does. */
export function Link(props: { href: string; class?: string; children: ComponentChildren; 'aria-current'?: 'page' | undefined; title?: string }): JSX.Element {
  const onClick = (event: MouseEvent) => {
    if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    event.preventDefault();
    navigate(props.href);
  };
  return (
    <a href={props.href} class={props.class} onClick={onClick} aria-current={props['aria-current']} title={props.title}>
      {props.children}
    </a>
  );
}
